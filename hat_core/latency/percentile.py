"""Nearest-rank percentiles and the latency summary of one metric.

Nearest rank: the p-th percentile of n sorted values is the value at 1-based rank
ceil(p / 100 * n) (rank 1 for p = 0), so every reported percentile is a measured value and
P100 is the maximum. With 100 requests P95 is the 95th smallest and P99 the 99th.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank p-th percentile (0 <= p <= 100) of a non-empty sequence."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within 0..100, got {p}")
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


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
    return Distribution(len(values), percentile(values, 50), percentile(values, 95),
                        percentile(values, 99), max(values), sum(values) / len(values))
