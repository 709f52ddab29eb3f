"""Day-by-day stability of an effect: the lift per day, its CI, and a heterogeneity test.

Each day's lift is a Welch/delta-method estimate over that day's rows (the users with a row
that day; CUPED per day when the metric has a covariate). Reported: the share of days whose
CI excludes 0 in the direction of the overall lift, and Cochran's Q across days (statsmodels
`combine_effects`; Q ~ chi2(k - 1) when the true lift is the same every day) with
I^2 = max(0, (Q - df) / Q). Days share users, so their estimates are positively correlated and
Q is conservative (it under-rejects); a small Q p-value is strong evidence of a drifting effect.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.stats.meta_analysis import combine_effects

from hat_core.evidence.ab_data import ARM, DAY
from hat_core.evidence.cuped import cuped_adjust
from hat_core.evidence.lift import LiftEstimate, json_number, undefined_lift, welch_lift


@dataclass(frozen=True)
class DayLift:
    """One day's estimate; `estimate.lift` is NaN when the day cannot be estimated."""

    day: str
    n_control: int
    n_treatment: int
    estimate: LiftEstimate

    def to_dict(self) -> dict:
        return {"day": self.day, "n_control": self.n_control, "n_treatment": self.n_treatment,
                **{k: v for k, v in self.estimate.to_dict().items() if k != "method"}}


@dataclass(frozen=True)
class Stability:
    """Per-day lifts, the share of days agreeing with `direction`, and Cochran's Q."""

    days: tuple[DayLift, ...]
    direction: int  # sign of the overall lift: +1, -1 or 0
    consistent_days: int  # days whose CI excludes 0 on the `direction` side
    estimable_days: int  # days with a defined estimate (both arms, a spread, control mean > 0)
    cochran_q: float
    q_df: int
    q_p_value: float
    i2: float

    @property
    def share_consistent(self) -> float:
        """consistent_days / estimable_days (NaN without estimable days)."""
        return self.consistent_days / self.estimable_days if self.estimable_days else math.nan

    def to_dict(self) -> dict:
        return {"days": [d.to_dict() for d in self.days], "direction": self.direction,
                "consistent_days": self.consistent_days,
                "estimable_days": self.estimable_days,
                "share_consistent": json_number(self.share_consistent),
                "cochran_q": json_number(self.cochran_q), "q_df": self.q_df,
                "q_p_value": json_number(self.q_p_value), "i2": json_number(self.i2)}


def day_lifts(frame: pd.DataFrame, metric: str, days: Sequence[str], *, control: str,
              treatment: str, covariate: str | None = None, alpha: float = 0.05,
              ) -> list[DayLift]:
    """The lift of `metric` on each day, in `days` order."""
    out = []
    by_day = dict(tuple(frame.groupby(DAY, sort=False)))
    for day in days:
        rows = by_day[day]
        c, t = rows[rows[ARM] == control], rows[rows[ARM] == treatment]
        y_c, y_t = c[metric].to_numpy(float), t[metric].to_numpy(float)
        if min(len(c), len(t)) < 2 or y_c.mean() == 0:
            out.append(DayLift(day, len(c), len(t), undefined_lift("welch")))
            continue
        if covariate:
            y_c, y_t, _ = cuped_adjust(y_c, c[covariate].to_numpy(float), y_t,
                                       t[covariate].to_numpy(float))
        out.append(DayLift(day, len(c), len(t), welch_lift(y_c, y_t, alpha)))
    return out


def summarize_days(lifts: Sequence[DayLift], direction: int, alpha: float = 0.05) -> Stability:
    """Share of days agreeing with `direction` and Cochran's Q over the estimable days."""
    usable = [d.estimate for d in lifts if _se(d.estimate) > 0]
    agree = sum(1 for e in usable if direction != 0 and e.excludes_zero() == direction)
    if len(usable) < 2:
        return Stability(tuple(lifts), direction, agree, len(usable), math.nan, 0, math.nan,
                         math.nan)
    effects = np.array([e.lift for e in usable])
    variances = np.array([_se(e) ** 2 for e in usable])
    combined = combine_effects(effects, variances, alpha=alpha)
    homogeneity = combined.test_homogeneity()
    q, df = float(homogeneity.statistic), int(homogeneity.df)
    i2 = max(0.0, (q - df) / q) if q > 0 else 0.0
    return Stability(tuple(lifts), direction, agree, len(usable), q, df,
                     float(homogeneity.pvalue), i2)


def _se(estimate: LiftEstimate) -> float:
    """The standard error, 0 when undefined (such days are left out of Q)."""
    return 0.0 if math.isnan(estimate.se) else estimate.se
