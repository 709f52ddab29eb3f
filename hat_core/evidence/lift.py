"""The relative lift of a per-user metric, treatment mean / control mean - 1, with its CI.

Two estimators over the same per-user values:
- `welch_lift`: Welch's unequal-variance t-test (scipy `ttest_ind(equal_var=False)`) for the
  p-value and the CI of the absolute difference; the CI of the relative lift by the delta
  method, se^2 = s_t^2 / (n_t m_c^2) + m_t^2 s_c^2 / (n_c m_c^4), lift +- z_{1-alpha/2} se.
- `bootstrap_lift`: scipy `bootstrap` resampling each arm independently (percentile or BCa);
  the p-value inverts the percentile interval: 2 min(P*(lift <= 0), P*(lift >= 0)), each
  share counted as (k + 1) / (B + 1).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from hat_core.errors import ConfigError, Problem
from hat_core.evidence.options import BOOTSTRAP_METHODS

BCA_MAX_USERS = 50_000  # scipy's BCa jackknife costs O(n^2)
NAN = float("nan")


@dataclass(frozen=True)
class LiftEstimate:
    """One estimate of the relative lift; NaN where undefined (control mean 0, no spread)."""

    method: str
    lift: float
    ci_low: float
    ci_high: float
    p_value: float
    se: float = NAN  # standard error of `lift` (delta method; bootstrap: sd of the resamples)
    diff: float = NAN  # treatment mean - control mean (absolute)
    diff_ci_low: float = NAN
    diff_ci_high: float = NAN

    def excludes_zero(self) -> int:
        """+1 when the whole CI is above 0, -1 when below, 0 otherwise (or undefined)."""
        if self.ci_low > 0:
            return 1
        if self.ci_high < 0:
            return -1
        return 0

    def to_dict(self) -> dict:
        return {k: json_number(v) for k, v in asdict(self).items()}


def json_number(value):
    """NaN -> None, numpy scalars -> Python (for JSON)."""
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else float(value)
    return value


def undefined_lift(method: str) -> LiftEstimate:
    """The estimate of a lift that does not exist (a control mean of 0)."""
    return LiftEstimate(method, NAN, NAN, NAN, NAN)


def relative_lift(treatment, control, axis=-1):
    """mean(treatment) / mean(control) - 1 along `axis` (vectorised for the bootstrap)."""
    return np.mean(treatment, axis=axis) / np.mean(control, axis=axis) - 1


def welch_lift(control: np.ndarray, treatment: np.ndarray, alpha: float = 0.05) -> LiftEstimate:
    """Welch's t-test p-value; delta-method CI of the relative lift (see module docstring)."""
    c, t = np.asarray(control, float), np.asarray(treatment, float)
    m_c, m_t = c.mean(), t.mean()
    v_c, v_t = c.var(ddof=1), t.var(ddof=1)
    if m_c == 0 or (v_c == 0 and v_t == 0):
        return LiftEstimate("welch", NAN, NAN, NAN, NAN, diff=float(m_t - m_c))
    test = stats.ttest_ind(t, c, equal_var=False)
    diff_ci = test.confidence_interval(1 - alpha)
    lift = m_t / m_c - 1
    se = math.sqrt(v_t / (len(t) * m_c**2) + m_t**2 * v_c / (len(c) * m_c**4))
    z = stats.norm.ppf(1 - alpha / 2)
    return LiftEstimate("welch", float(lift), float(lift - z * se), float(lift + z * se),
                        float(test.pvalue), se, float(m_t - m_c),
                        float(diff_ci.low), float(diff_ci.high))


def bootstrap_lift(control: np.ndarray, treatment: np.ndarray, alpha: float = 0.05, *,
                   n_resamples: int = 1000, rng: np.random.Generator,
                   method: str = "percentile") -> LiftEstimate:
    """Bootstrap CI and p-value of the relative lift, arms resampled independently."""
    if method not in BOOTSTRAP_METHODS:
        raise ConfigError(f"unknown bootstrap method {method!r}",
                          [Problem("bootstrap_method", f"one of {', '.join(BOOTSTRAP_METHODS)}")])
    c, t = np.asarray(control, float), np.asarray(treatment, float)
    if method == "BCa" and len(c) + len(t) > BCA_MAX_USERS:
        raise ConfigError("BCa is too slow for this many users",
                          [Problem("bootstrap_method",
                                   f"use percentile above {BCA_MAX_USERS} users")])
    if c.mean() == 0 or (c.var() == 0 and t.var() == 0):
        return undefined_lift(f"bootstrap-{method}")
    batch = max(1, int(2e7 // (len(c) + len(t))))
    with warnings.catch_warnings():  # degenerate resamples give NaN, reported as such
        warnings.simplefilter("ignore")
        res = stats.bootstrap((t, c), relative_lift, n_resamples=n_resamples, batch=batch,
                              vectorized=True, paired=False, confidence_level=1 - alpha,
                              method=method, rng=rng)
    dist = res.bootstrap_distribution
    below, above = np.sum(dist <= 0), np.sum(dist >= 0)
    p = min(1.0, 2 * min(below + 1, above + 1) / (len(dist) + 1))
    return LiftEstimate(f"bootstrap-{method}", float(relative_lift(t, c)),
                        float(res.confidence_interval.low), float(res.confidence_interval.high),
                        float(p), float(np.std(dist, ddof=1)), float(t.mean() - c.mean()))
