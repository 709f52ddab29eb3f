"""A seeded simulator of per-user, per-day A/B data with a known true lift.

Each user has a latent spending propensity z ~ N(0, 1). On each day a user buys with a
probability that grows with z, an order's value is lognormal and scales with exp(sigma z)
(so GMV per user is zero-heavy and long-tailed), a purchase's receipt is confirmed with
probability 0.92, and product-detail-page views are Poisson with a rate that grows with z.
The pre-period covariates (`<metric>_pre`, `pre_days` days before the test) use the
propensity rho z + sqrt(1 - rho^2) e, rho = `covariate_correlation`.

Treatment multiplies each metric's daily expectation by (1 + lift): the true relative lift of
the per-user mean is exactly `true_lift` (or `metric_lifts[m]`, or the mean of `day_lifts`
weighted by the day factors when the lift drifts by day). Run `hat ab simulate --out FILE`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta

import numpy as np
import pandas as pd

METRICS = ("gmv", "confirmed_receipt_gmv", "detail_page_views")
CONFIRM_RATE = 0.92
VIEW_RATE = 3.0
ORDER_MEDIAN = 60.0


def simulate_ab(rng: np.random.Generator | int, *, n_control: int = 2000,
                n_treatment: int = 2000, true_lift: float = 0.0, days: int = 7,
                covariate_correlation: float = 0.7, buy_rate: float = 0.08,
                spend_sigma: float = 0.8, pre_days: int = 14,
                metric_lifts: Mapping[str, float] | None = None,
                day_lifts: Sequence[float] | None = None, control: str = "control",
                treatment: str = "treatment", start: date = date(2026, 8, 1)) -> pd.DataFrame:
    """One row per (user, day): user_id, arm, day, the METRICS and their `_pre` covariates."""
    rng = np.random.default_rng(rng)
    n = n_control + n_treatment
    z = rng.standard_normal(n)
    rho = covariate_correlation
    z_pre = rho * z + np.sqrt(1 - rho**2) * rng.standard_normal(n)
    treated = np.arange(n) >= n_control
    factors = 1 + 0.15 * np.sin(np.arange(days) * 2 * np.pi / 7)  # a weekly rhythm
    columns: dict[str, list[np.ndarray]] = {m: [] for m in METRICS}
    for d in range(days):
        lifts = _lifts(true_lift, metric_lifts, day_lifts, d)
        for m, values in _day(rng, z, factors[d], buy_rate, spend_sigma, treated, lifts).items():
            columns[m].append(values)
    pre = _pre(rng, z_pre, pre_days, buy_rate, spend_sigma)
    ids = np.array([f"u{i:07d}" for i in range(n)], dtype=object)
    arms = np.where(treated, treatment, control).astype(object)
    labels = [(start + timedelta(days=d)).isoformat() for d in range(days)]
    out = pd.DataFrame({"user_id": np.tile(ids, days), "arm": np.tile(arms, days),
                        "day": np.repeat(np.array(labels, dtype=object), n),
                        **{m: np.concatenate(columns[m]) for m in METRICS},
                        **{k: np.tile(v, days) for k, v in pre.items()}})
    return out[["user_id", "arm", "day", *METRICS, *(m + "_pre" for m in METRICS)]]


def _lifts(true_lift, metric_lifts, day_lifts, d: int) -> dict[str, float]:
    base = day_lifts[d] if day_lifts is not None else true_lift
    return {m: (metric_lifts or {}).get(m, base) for m in METRICS}


def _day(rng, z, factor, buy_rate, sigma, treated, lifts) -> dict[str, np.ndarray]:
    """One day's metrics for every user (treatment scaled by 1 + lift in expectation)."""
    n = len(z)
    p_buy = np.clip(buy_rate * factor * np.exp(0.5 * z - 0.125), 0, 1)
    bought = rng.random(n) < p_buy
    value = ORDER_MEDIAN * np.exp(sigma * z - sigma**2 / 2 + 0.8 * rng.standard_normal(n))
    gmv = np.where(bought, value, 0.0)
    confirmed = gmv * (rng.random(n) < CONFIRM_RATE)
    view_rate = VIEW_RATE * factor * np.exp(0.5 * z - 0.125)
    scale = {m: np.where(treated, 1 + lifts[m], 1.0) for m in METRICS}
    views = rng.poisson(view_rate * scale["detail_page_views"])
    return {"gmv": np.round(gmv * scale["gmv"], 2),
            "confirmed_receipt_gmv": np.round(confirmed * scale["confirmed_receipt_gmv"], 2),
            "detail_page_views": views.astype(float)}


def _pre(rng, z_pre, pre_days, buy_rate, sigma) -> dict[str, np.ndarray]:
    """Pre-period totals per user, from the same model with the correlated propensity."""
    totals = {m: np.zeros(len(z_pre)) for m in METRICS}
    none = np.zeros(len(z_pre), bool)
    for _ in range(pre_days):
        day = _day(rng, z_pre, 1.0, buy_rate, sigma, none, dict.fromkeys(METRICS, 0.0))
        for m in METRICS:
            totals[m] += day[m]
    return {m + "_pre": np.round(totals[m], 2) for m in METRICS}


def true_lift_of(true_lift: float = 0.0, *, days: int = 7,
                 day_lifts: Sequence[float] | None = None) -> float:
    """The true relative lift of the per-user total (day lifts weighted by the day factors)."""
    if day_lifts is None:
        return true_lift
    factors = 1 + 0.15 * np.sin(np.arange(days) * 2 * np.pi / 7)
    return float(np.dot(factors, day_lifts) / factors.sum())
