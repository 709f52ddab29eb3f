"""A/B analysis of per-user metrics: lift, CIs, p-values, CUPED, SRM, multiplicity, stability.

`analyze(data, config)` is pure: validated `AbData` in, a frozen `AbReport` out (`to_dict()`
for JSON, a database row or a console page; `hat_core.evidence.ab_render` for tables).
Each metric is summed over days per user; the per-user values (CUPED-adjusted when the file
has `<metric>_pre`) go to Welch's test and the bootstrap. Run `hat ab analyze FILE`; the
methods and their references are in docs/evidence.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hat_core.errors import ConfigError, Problem
from hat_core.evidence.ab_data import ARM, AbData
from hat_core.evidence.cuped import Cuped, cuped_adjust
from hat_core.evidence.lift import (
    BOOTSTRAP_METHODS,
    LiftEstimate,
    bootstrap_lift,
    json_number,
    undefined_lift,
    welch_lift,
)
from hat_core.evidence.multiplicity import CORRECTIONS, adjust_pvalues
from hat_core.evidence.srm import SRM_THRESHOLD, SrmCheck, srm_check
from hat_core.evidence.stability import Stability, day_lifts, summarize_days


@dataclass(frozen=True)
class AbConfig:
    """How to analyse; `expected_split` is the share of users expected in the control arm."""

    expected_split: float = 0.5
    alpha: float = 0.05
    bootstrap: int = 1000  # resamples; 0 turns the bootstrap off
    bootstrap_method: str = "percentile"
    correction: str = "holm"
    srm_threshold: float = SRM_THRESHOLD
    cuped: bool = True
    stability: bool = True
    seed: int = 0

    def __post_init__(self):
        problems = []
        if not 0 < self.alpha < 1:
            problems.append(Problem("alpha", f"{self.alpha} is not strictly between 0 and 1"))
        if not 0 < self.expected_split < 1:
            problems.append(Problem("expected_split", f"{self.expected_split}: the control "
                                                      "share, strictly between 0 and 1"))
        if self.bootstrap < 0 or 0 < self.bootstrap < 100:
            problems.append(Problem("bootstrap", f"{self.bootstrap}: 0 (off) or at least 100"))
        if self.bootstrap_method not in BOOTSTRAP_METHODS:
            problems.append(Problem("bootstrap_method", f"one of {', '.join(BOOTSTRAP_METHODS)}"))
        if self.correction not in CORRECTIONS:
            problems.append(Problem("correction", f"one of {', '.join(CORRECTIONS)}"))
        if problems:
            raise ConfigError("invalid A/B analysis settings", problems)


@dataclass(frozen=True)
class MetricResult:
    """One metric: means (raw, per user), Welch and bootstrap estimates, CUPED, adjusted p."""

    metric: str
    n_control: int
    n_treatment: int
    mean_control: float
    mean_treatment: float
    welch: LiftEstimate
    bootstrap: LiftEstimate | None
    cuped: Cuped | None
    p_adjusted: float  # Welch p-value after the correction over all metrics
    significant: bool  # p_adjusted < alpha
    stability: Stability | None

    @property
    def raw_lift(self) -> float:
        """mean_treatment / mean_control - 1 before CUPED (`welch.lift` is after it)."""
        return self.mean_treatment / self.mean_control - 1 if self.mean_control else math.nan

    @property
    def verdict(self) -> str:
        """`positive`, `negative` or `inconclusive` (significance after correction)."""
        if not self.significant:
            return "inconclusive"
        return "positive" if self.welch.lift > 0 else "negative"

    def to_dict(self) -> dict:
        return {"metric": self.metric, "n_control": self.n_control,
                "n_treatment": self.n_treatment,
                "mean_control": json_number(self.mean_control),
                "mean_treatment": json_number(self.mean_treatment),
                "raw_lift": json_number(self.raw_lift),
                "welch": self.welch.to_dict(),
                "bootstrap": self.bootstrap.to_dict() if self.bootstrap else None,
                "cuped": self.cuped.to_dict() if self.cuped else None,
                "p_adjusted": json_number(self.p_adjusted), "significant": self.significant,
                "verdict": self.verdict,
                "stability": self.stability.to_dict() if self.stability else None}


@dataclass(frozen=True)
class AbReport:
    """The whole analysis: arms, SRM check, settings, one `MetricResult` per metric."""

    control: str
    treatment: str
    days: tuple[str, ...]
    srm: SrmCheck
    config: AbConfig
    metrics: tuple[MetricResult, ...]

    @property
    def trustworthy(self) -> bool:
        """False when the sample ratio mismatches: then no lift should be acted on."""
        return not self.srm.mismatch

    def metric(self, name: str) -> MetricResult:
        for m in self.metrics:
            if m.metric == name:
                return m
        raise KeyError(name)

    def to_dict(self) -> dict:
        c = self.config
        return {"control": self.control, "treatment": self.treatment, "days": list(self.days),
                "trustworthy": self.trustworthy, "srm": self.srm.to_dict(),
                "settings": {"alpha": c.alpha, "expected_split": c.expected_split,
                             "bootstrap": c.bootstrap, "bootstrap_method": c.bootstrap_method,
                             "correction": c.correction, "cuped": c.cuped, "seed": c.seed},
                "metrics": [m.to_dict() for m in self.metrics]}


def analyze(data: AbData, config: AbConfig = AbConfig()) -> AbReport:
    """Every metric of `data` analysed under `config` (see the module docstring)."""
    users = data.per_user()
    is_c, is_t = users[ARM] == data.control, users[ARM] == data.treatment
    srm = srm_check(int(is_c.sum()), int(is_t.sum()), config.expected_split,
                    config.srm_threshold)
    seeds = np.random.SeedSequence(config.seed).spawn(len(data.metrics))
    partial = [_metric(data, users[is_c], users[is_t], m, config, np.random.default_rng(s))
               for m, s in zip(data.metrics, seeds, strict=True)]
    adjusted = adjust_pvalues([r.welch.p_value for r in partial], config.correction)
    results = tuple(_with_adjusted(r, p, config.alpha) for r, p in zip(partial, adjusted,
                                                                          strict=True))
    return AbReport(data.control, data.treatment, tuple(data.days()), srm, config, results)


def _metric(data: AbData, c, t, metric: str, config: AbConfig,
            rng: np.random.Generator) -> MetricResult:
    y_c, y_t = c[metric].to_numpy(float), t[metric].to_numpy(float)
    covariate = data.covariates.get(metric) if config.cuped else None
    cuped = None
    if covariate:
        y_c, y_t, cuped = cuped_adjust(y_c, c[covariate].to_numpy(float), y_t,
                                       t[covariate].to_numpy(float), covariate)
    if c[metric].mean() == 0:  # no relative lift; CUPED would only turn the 0 into noise
        welch, boot = undefined_lift("welch"), None
    else:
        welch = welch_lift(y_c, y_t, config.alpha)
        boot = (bootstrap_lift(y_c, y_t, config.alpha, n_resamples=config.bootstrap, rng=rng,
                               method=config.bootstrap_method) if config.bootstrap else None)
    stability = None
    if config.stability:
        lifts = day_lifts(data.frame, metric, data.days(), control=data.control,
                          treatment=data.treatment, covariate=covariate, alpha=config.alpha)
        stability = summarize_days(lifts, _sign(welch.lift), config.alpha)
    return MetricResult(metric, len(c), len(t), float(c[metric].mean()),
                        float(t[metric].mean()), welch, boot, cuped, math.nan, False, stability)


def _sign(x: float) -> int:
    return 0 if math.isnan(x) or x == 0 else (1 if x > 0 else -1)


def _with_adjusted(result: MetricResult, p_adjusted: float, alpha: float) -> MetricResult:
    return replace(result, p_adjusted=p_adjusted,
                   significant=bool(not math.isnan(p_adjusted) and p_adjusted < alpha))
