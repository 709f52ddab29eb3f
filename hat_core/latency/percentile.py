"""Nearest-rank percentiles and the latency summary of one metric.

Nearest rank: the p-th percentile of n sorted values is the value at 1-based rank
ceil(p / 100 * n) (rank 1 for p = 0), so every reported percentile is a measured value and
P100 is the maximum. With 100 requests P95 is the 95th smallest and P99 the 99th. This is
numpy's `percentile(..., method="inverted_cdf")` (the inverse of the empirical CDF).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

METHOD = "inverted_cdf"


def _check(values: Sequence[float], *ps: float) -> None:
    if not len(values):
        raise ValueError("percentile of no values")
    for p in ps:
        if not 0 <= p <= 100:
            raise ValueError(f"percentile must be within 0..100, got {p}")


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank p-th percentile (0 <= p <= 100) of a non-empty sequence: one of the
    values (an int stays an int)."""
    _check(values, p)
    return np.percentile(values, p, method=METHOD).item()


@dataclass(frozen=True)
class Distribution:
    """Count, P50/P95/P99, max and mean of one metric (None when there are no values)."""

    count: int
    p50: float | None
    p95: float | None
    p99: float | None
    max: float | None
    mean: float | None

    def to_dict(self) -> dict:
        return asdict(self)

    def stat(self, name: str) -> float | None:
        """One statistic by name: `p50, p95, p99, max, mean`."""
        return getattr(self, name)


def distribution(values: Sequence[float]) -> Distribution:
    """The summary of `values`; an empty sequence gives count 0 and None elsewhere."""
    if not values:
        return Distribution(0, None, None, None, None, None)
    p50, p95, p99 = np.percentile(values, [50, 95, 99], method=METHOD).tolist()
    return Distribution(len(values), p50, p95, p99, max(values), sum(values) / len(values))
