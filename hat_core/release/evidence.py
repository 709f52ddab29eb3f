"""The evidence behind one gate: a candidate against a reference on the same cases, paired.

    outcome = outcome_of("t2.accuracy")                 # per-case outcome and its direction
    ev = paired_evidence(candidate_rows, champion_rows, outcome, tolerance=0.02,
                         min_cases=30, alpha=0.05)
    ev.verdict, ev.reason, ev.p_value                    # passed / failed / inconclusive

The rows are the suites' per-case rows (`<report>.cases.jsonl`, `hat_core.evaluation.evaluate.
write_cases`). A gate's metric key `suite.metric` names the suite and the per-case outcome
(`OUTCOMES`: `accuracy`/`pass_rate` = the case passed, `bad_case_rate` = it did not, `ife_p`
= IFEval's strict prompt verdict, the call metrics of `hat_core.evaluation.call_metrics`).
The two models are paired by case id and compared by `hat_core.evaluation.paired.
compare_cases` (McNemar's exact test on the discordant cases, a paired bootstrap interval of
the difference). The verdict, in this order:

1. fewer than `min_cases` paired cases, or the two do not cover the same cases: inconclusive;
2. McNemar's p >= `alpha` (0 against 0 always lands here: no case tells them apart):
   inconclusive, never passed;
3. significantly better: passed; significantly worse by no more than `tolerance`: passed
   (what the tolerance allows); significantly worse beyond it: failed.

That superiority rule (`paired_evidence`) answers "is it better?". The blessing gates and the
zero-shot check ask "is it not worse by more than a margin?", so they read the same pairs as
a non-inferiority test (`non_inferiority_evidence`): the Bonett-Price interval of the change
(`hat_core.evaluation.call_metrics.paired_difference_interval`) against the `margin`:

1. fewer than `min_cases` paired cases, or no case right on either side (0 against 0):
   inconclusive;
2. the whole interval above -margin: passed (it loses less than the margin);
3. the whole interval below -margin, or a loss that is significant (McNemar's p < alpha) and
   beyond the margin: failed;
4. otherwise inconclusive (too little evidence either way).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hat_core.evaluation.call_metrics import CASE_RATES
from hat_core.evaluation.errors import EvalInputError
from hat_core.release.verdict import FAILED, INCONCLUSIVE, PASSED


@dataclass(frozen=True)
class Outcome:
    """The per-case outcome a gate metric reads: the row field that is true for a good case,
    and whether the metric is the share of cases without it (`bad_case_rate`, lower is
    better)."""

    suite: str
    metric: str
    field: str  # `passed`, `strict`, `loose` or a call metric in the row's `calls`
    inverse: bool = False

    @property
    def key(self) -> str:
        return f"{self.suite}.{self.metric}"


# metric -> (the good case's row field, whether the metric counts the cases without it)
OUTCOMES: dict[str, tuple[str, bool]] = {
    "accuracy": ("passed", False), "pass_rate": ("passed", False),
    "bad_case_rate": ("passed", True), "ife_p": ("strict", False),
    "prompt_strict": ("strict", False), "prompt_loose": ("loose", False),
    **{m: (m, False) for m in CASE_RATES},
}


def outcome_of(key: str) -> Outcome:
    """The per-case outcome of a gate metric key `suite.metric`; `ValueError` listing the
    metrics that have one."""
    suite, _, metric = key.partition(".")
    if not suite or metric not in OUTCOMES:
        raise ValueError(f"{key!r} has no per-case outcome to pair; write SUITE.METRIC with "
                         f"METRIC one of {', '.join(OUTCOMES)}")
    field, inverse = OUTCOMES[metric]
    return Outcome(suite, metric, field, inverse)


@dataclass(frozen=True)
class Evidence:
    """A gate's paired evidence: the metric of both on `n` shared cases, the cases only one
    of them got right, McNemar's p, the bootstrap interval of the metric's difference
    (candidate - reference), and the verdict."""

    verdict: str
    reason: str
    n: int = 0
    candidate: float | None = None
    reference: float | None = None
    candidate_only: int = 0  # good cases of the candidate only
    reference_only: int = 0
    p_value: float | None = None
    diff_interval: tuple[float, float] | None = None
    alpha: float = 0.05
    min_cases: int = 0
    test: str = "mcnemar-exact"

    def to_dict(self) -> dict:
        """Plain JSON values (the interval as a list), without the verdict and reason that
        the gate check carries itself."""
        interval = list(self.diff_interval) if self.diff_interval else None
        return {"n": self.n, "candidate": self.candidate, "reference": self.reference,
                "candidate_only": self.candidate_only, "reference_only": self.reference_only,
                "p_value": self.p_value, "diff_interval": interval, "alpha": self.alpha,
                "min_cases": self.min_cases, "test": self.test}


def case_outcomes(rows: Sequence[Mapping], outcome: Outcome) -> list[dict]:
    """The rows of `outcome.suite` as `{case_id, passed}` (`passed`: a good case), the shape
    `compare_cases` pairs; IFEval rows are keyed `ifeval/<key>`."""
    out = []
    for row in rows:
        if row.get("suite") != outcome.suite:
            continue
        holder = row.get("calls", {}) if outcome.field in CASE_RATES else row
        if outcome.field not in holder:
            raise EvalInputError(f"{outcome.key}: a {outcome.suite} case row has no "
                                 f"{outcome.field!r} (is {outcome.metric} a metric of "
                                 f"{outcome.suite}?)")
        case_id = row.get("case_id") or f"{outcome.suite}/{row.get('key')}"
        out.append({"case_id": case_id, "passed": bool(holder[outcome.field])})
    return out


def rate(rows: Sequence[Mapping], outcome: Outcome) -> float | None:
    """The metric's value over the rows of its suite (None: no rows); `EvalInputError` when
    the rows lack the outcome's field."""
    cases = case_outcomes(rows, outcome)
    if not cases:
        return None
    good = sum(c["passed"] for c in cases) / len(cases)
    return 1.0 - good if outcome.inverse else good


def paired_evidence(candidate: Sequence[Mapping], reference: Sequence[Mapping],
                    outcome: Outcome, *, tolerance: float, min_cases: int,
                    alpha: float) -> Evidence:
    """The verdict of the candidate against the reference on the cases both played (see the
    module docstring); `candidate`'s rows of the suite must exist (the caller checks)."""
    from hat_core.evaluation.paired import compare_cases

    limits = {"alpha": alpha, "min_cases": min_cases}
    try:
        cmp = compare_cases(case_outcomes(reference, outcome), case_outcomes(candidate, outcome),
                            metric="passed")
    except EvalInputError as exc:
        return Evidence(INCONCLUSIVE, f"{outcome.key}: {exc}", **limits)
    verdict, why = decide(n=cmp.n, discordant=cmp.a_only + cmp.b_only, gain=cmp.diff,
                          p_value=cmp.p_value, tolerance=tolerance, min_cases=min_cases,
                          alpha=alpha)
    lo, hi = cmp.diff_interval
    if outcome.inverse:
        c, r, interval = 1.0 - cmp.b, 1.0 - cmp.a, (-hi, -lo)
    else:
        c, r, interval = cmp.b, cmp.a, (lo, hi)
    reason = (f"{outcome.key} {c:.3f} vs {r:.3f} on {cmp.n} paired cases (good only for the "
              f"candidate: {cmp.b_only}, only for the reference: {cmp.a_only}; McNemar p = "
              f"{cmp.p_value:.3g}): {why}")
    return Evidence(verdict, reason, cmp.n, c, r, cmp.b_only, cmp.a_only, cmp.p_value,
                    interval, **limits)


def non_inferiority_evidence(current: Sequence[Mapping], reference: Sequence[Mapping],
                            outcome: Outcome, *, margin: float, min_cases: int,
                            alpha: float, who: str = "the candidate") -> Evidence:
    """Is `current` (the live model on a new harness) at most `margin` below `reference` (its
    own cases on the old one)? The verdict of the module docstring's second list."""
    from hat_core.evaluation.call_metrics import paired_difference_interval
    from hat_core.evaluation.paired import compare_cases

    limits = {"alpha": alpha, "min_cases": min_cases}
    try:
        cmp = compare_cases(case_outcomes(reference, outcome), case_outcomes(current, outcome),
                            metric="passed")
    except EvalInputError as exc:
        return Evidence(INCONCLUSIVE, f"{outcome.key}: {exc}", **limits)
    lo, hi = paired_difference_interval(cmp.b_only, cmp.a_only, cmp.n, alpha)
    c, r = cmp.b, cmp.a
    if outcome.inverse:  # a bad-case rate: its change is the opposite of the good cases'
        c, r = 1.0 - c, 1.0 - r
    verdict, why = _non_inferior(n=cmp.n, any_good=cmp.a + cmp.b > 0, low=lo, high=hi,
                                 gain=cmp.diff, p_value=cmp.p_value, margin=margin,
                                 min_cases=min_cases, alpha=alpha)
    reason = (f"{outcome.key} {c:.3f} vs {r:.3f} on {cmp.n} paired cases (good only for "
              f"{who}: {cmp.b_only}, only for the reference: {cmp.a_only}; McNemar p = "
              f"{cmp.p_value:.3g}; change of the good cases {cmp.diff:+.3f}, "
              f"{100 * (1 - alpha):.0f}% interval {lo:+.3f} to {hi:+.3f}): {why}")
    interval = (-hi, -lo) if outcome.inverse else (lo, hi)
    return Evidence(verdict, reason, cmp.n, c, r, cmp.b_only, cmp.a_only, cmp.p_value,
                    interval, test=f"non-inferiority (Bonett-Price), margin {margin}", **limits)


def _non_inferior(*, n: int, any_good: bool, low: float, high: float, gain: float,
                  p_value: float, margin: float, min_cases: int,
                  alpha: float) -> tuple[str, str]:
    if n < min_cases:
        return INCONCLUSIVE, f"too few cases: {n} < min_cases {min_cases}"
    if not any_good:
        return INCONCLUSIVE, ("0 against 0: no case right on either side, nothing shows it "
                              "is not worse")
    if low > -margin:
        return PASSED, f"the interval lies above -{margin}: it loses less than the margin"
    if high < -margin or (p_value < alpha and gain < -margin):
        return FAILED, (f"it loses more than the margin {margin} (the interval lies below "
                        f"-{margin}, or the loss is significant at alpha {alpha} and beyond "
                        "it)")
    return INCONCLUSIVE, (f"the interval straddles -{margin}: too little evidence that it "
                          f"loses less than the margin (or more){_too_few(n, margin, alpha)}")


def cases_to_decide(margin: float, alpha: float) -> int:
    """The fewest paired cases on which a model that changes no case (0 against 0) shows a
    loss under `margin`: the Bonett-Price interval's half-width there is z * sqrt(2) / (n + 2)
    (`call_metrics.paired_difference_interval`). Fewer cases can never pass the margin."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - alpha / 2)
    return max(1, math.floor(z * math.sqrt(2) / margin - 2) + 1)


def _too_few(n: int, margin: float, alpha: float) -> str:
    """What to do when `n` cases could not pass `margin` even with no case changed."""
    if margin <= 0 or n >= (need := cases_to_decide(margin, alpha)):
        return ""
    return (f"; {n} paired cases cannot show it even with no case changed (the interval at 0 "
            f"against 0 is wider than the margin): at least {need} can, or a wider margin")


def decide(*, n: int, discordant: int, gain: float, p_value: float, tolerance: float,
           min_cases: int, alpha: float) -> tuple[str, str]:
    """The verdict and why, from the paired cases' count, how many of them only one model got
    right, the candidate's gain over the reference (in the better direction), McNemar's p and
    the gate's limits."""
    if n < min_cases:
        return INCONCLUSIVE, f"too few cases: {n} < min_cases {min_cases}"
    if p_value >= alpha:
        if discordant == 0:
            return INCONCLUSIVE, ("0 cases against 0 tell them apart: nothing shows the "
                                  "candidate is better or worse")
        return INCONCLUSIVE, f"p >= alpha {alpha}: the difference may be chance"
    if gain > 0:
        return PASSED, f"significantly better (p < alpha {alpha})"
    if gain >= -tolerance - 1e-12:
        return PASSED, (f"significantly lower by {-gain:.3f}, within the tolerance "
                        f"{tolerance}")
    return FAILED, (f"significantly worse by {-gain:.3f} (p < alpha {alpha}), beyond the "
                    f"tolerance {tolerance}")
