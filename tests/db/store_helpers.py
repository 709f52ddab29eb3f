"""Helpers for the store tests: harness variants and a submit that runs in its own process."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from hat_core.harness.io import load_harness
from hat_core.harness.model import Harness

V1 = Path(__file__).resolve().parents[2] / "examples" / "harnesses" / "v1.yaml"


@cache
def base_harness() -> Harness:
    return load_harness(V1)


def variant(i: int, line: str | None = None) -> Harness:
    """v1 with description `variant i` (distinct content for each i), optionally another line."""
    update = {"description": f"variant {i}"}
    if line is not None:
        update["harness"] = line
    return base_harness().model_copy(update=update)


@cache
def _factory(url: str):
    from db.engine import make_engine, make_session_factory

    return make_session_factory(make_engine(url, poolclass=_null_pool()))


def _null_pool():
    from sqlalchemy.pool import NullPool

    return NullPool


def submit_variant(url: str, i: int) -> tuple[int, int]:
    """Submit `variant(i)` through a fresh engine of this process: (version id, number)."""
    from db.engine import in_transaction
    from db.harness_repo import submit_harness

    version = in_transaction(
        _factory(url), lambda s: submit_harness(s, harness=variant(i), author=f"p{i}", note="")
    )
    return version.id, version.number
