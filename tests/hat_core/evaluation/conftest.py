"""Fixtures of the evaluation tests: the example harnesses and a scripted backend."""

from __future__ import annotations

from pathlib import Path

import pytest

# --- simulator-suite fixtures (t1, t2, robustness, cot_length, edit check) ------------------

EXAMPLE_HARNESSES = Path(__file__).resolve().parents[3] / "examples" / "harnesses"


@pytest.fixture(scope="session")
def v1_harness():
    from hat_core.harness.io import load_harness

    return load_harness(EXAMPLE_HARNESSES / "v1.yaml")


@pytest.fixture(scope="session")
def v2_harness():
    from hat_core.harness.io import load_harness

    return load_harness(EXAMPLE_HARNESSES / "v2.yaml")


@pytest.fixture
def scripted_backend():
    """`ScriptedBackend(outputs)`: a fake `InferenceBackend` answering from a list."""
    from eval_fakes import ScriptedBackend

    return ScriptedBackend
