"""Turning ORM rows into the frozen values of `db.values`."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any, TypeVar

T = TypeVar("T")


def as_utc(value: Any) -> Any:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def to_value(cls: type[T], row: Any, **extra: Any) -> T:
    """Build the dataclass `cls` from the same-named attributes of `row` (and `extra`)."""
    names = [f.name for f in dataclasses.fields(cls) if f.name not in extra]
    return cls(**{n: as_utc(getattr(row, n)) for n in names}, **extra)


def snapshot(row: Any, *names: str) -> dict[str, Any]:
    """A JSON-ready dict of some columns of `row`, for audit before/after."""
    out = {}
    for n in names:
        value = getattr(row, n)
        out[n] = as_utc(value).isoformat() if isinstance(value, datetime) else value
    return out
