"""Call-level metrics of played cases, beside the strict pass rate, each with an interval.

    facts = case_calls(outcome.scenario, outcome.episode, outcome.scores)
    metrics, intervals = call_metrics([case_calls(...) for ...])

A judged pass needs every call, every argument and every fact of the reply. A small model that
picks the right tool and copies its arguments but garbles the reply fails that, so these say
where a case went wrong (all read off the simulator's analysis, in canonical terms: names and
arguments after the surface's binding):

- `first_tool_right`: the first viewer turn's first call names the tool the ground truth
  needs first; for a turn that needs no call (a comment, a refusal, a clarifying question),
  that no call was made.
- `first_call_exact`: that, and the call's canonical arguments are exactly the expected ones
  (numbers by value, no missing, no extra, none unbound) and the tool accepted them.
- `all_calls_exact`: every viewer turn was reached, and in each one every required call was
  made with matching arguments, with no call to a missing or unexpected tool.
- `fact_accuracy`: the share of the facts the replies had to state that they state (over the
  cases that have facts; pooled over facts).

Rates of cases carry a Wilson score interval (`statsmodels`); `fact_accuracy`, a pooled share
whose facts cluster in cases, a percentile bootstrap over cases (seeded).
`design_effect` measures how far cases move together within clusters (scenario kinds) for
`hat eval compare --by kind` (`hat_core.evaluation.paired`).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass

from hat_core.sim.episode import CallRecord, Episode
from hat_core.sim.scenarios import ExpectedCall, Scenario
from hat_core.sim.scoring import Scores, args_match

CASE_RATES = ("first_tool_right", "first_call_exact", "all_calls_exact")
METRICS = (*CASE_RATES, "fact_accuracy")
ALPHA = 0.05
BOOTSTRAP = 2000


@dataclass(frozen=True)
class CaseCalls:
    """What one case did with its calls and facts."""

    needs_call: bool
    first_tool_right: bool
    first_call_exact: bool
    all_calls_exact: bool
    facts: int
    facts_stated: int

    def to_dict(self) -> dict:
        return asdict(self)


def exact_call(expected: ExpectedCall, call: CallRecord) -> bool:
    """The call is `expected`: same tool, the expected canonical arguments and no others,
    every argument bound and accepted by the tool."""
    return (call.tool_id == expected.tool_id and call.error_type != "bad_arguments"
            and set(call.args) == set(expected.args) and args_match(expected.args, call.args))


def case_calls(scenario: Scenario, episode: Episode, scores: Scores) -> CaseCalls:
    """The call-level facts of one played case (see the module docstring)."""
    truth = scenario.turns[0]
    made = episode.turns[0].calls if episode.turns else ()
    want = truth.required[0] if truth.required else None
    if want is None:
        right = exact = not made
    else:
        right = bool(made) and made[0].tool_id == want.tool_id
        exact = right and exact_call(want, made[0])
    reached = len(episode.turns) >= len(scenario.turns)
    clean = all(not (t.missing_calls or t.wrong_args or t.hallucinated or t.unexpected)
                for t in scores.turns)
    facts = sum(len(t.facts) for t in scenario.turns)
    missing = sum(len(ts.missing_facts) if i < len(episode.turns) else len(t.facts)
                  for i, (t, ts) in enumerate(zip(scenario.turns, scores.turns, strict=True)))
    return CaseCalls(needs_call=want is not None, first_tool_right=right,
                     first_call_exact=exact, all_calls_exact=reached and clean,
                     facts=facts, facts_stated=facts - missing)


def wilson(successes: float, n: float, alpha: float = ALPHA,
           design_effect: float = 1.0) -> tuple[float, float]:
    """The Wilson score interval of `successes` of `n` ((0, 1) for no cases); with a
    `design_effect` above 1 (clustered cases), of the effective counts (both divided by it)."""
    if n == 0:
        return 0.0, 1.0
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes / design_effect, n / design_effect, alpha=alpha,
                                   method="wilson")
    return float(low), float(high)


def design_effect(values: Sequence[float], clusters: Sequence[Hashable] | None
                  ) -> tuple[float, int]:
    """The Rao-Scott design effect of the mean of per-case `values` (0/1 outcomes, or paired
    differences -1/0/+1) whose cases fall in `clusters`, and the number of clusters.

    It is the cluster-robust variance of the mean (the ratio estimator's, with the small-sample
    factor K/(K-1)) over the variance of independent cases (with n/(n-1)), never below 1.
    Without clusters, with every case its own cluster, or with no spread at all it is 1 (the
    variance cannot show clustering); with one cluster of several cases it is n (one
    independent outcome)."""
    n = len(values)
    if clusters is None or n < 2:
        return 1.0, n
    groups: dict[Hashable, list[float]] = defaultdict(list)
    for value, cluster in zip(values, clusters, strict=True):
        groups[cluster].append(value)
    k = len(groups)
    if k == n:
        return 1.0, k
    if k == 1:
        return float(n), 1
    mean = sum(values) / n
    independent = sum((v - mean) ** 2 for v in values) * n / (n - 1)
    if independent <= 0:
        return 1.0, k
    clustered = sum((sum(g) - len(g) * mean) ** 2 for g in groups.values()) * k / (k - 1)
    return max(1.0, clustered / independent), k


def paired_difference_interval(b_only: int, a_only: int, n: int, alpha: float = ALPHA
                               ) -> tuple[float, float]:
    """The Bonett-Price adjusted Wald interval of rate_b - rate_a on `n` paired cases, of which
    `b_only` only b got right and `a_only` only a ((-1, 1) for no cases). Unlike the paired
    bootstrap it does not collapse to (0, 0) when no case is discordant: 0 of 45 still leaves
    about +-6 points (Bonett and Price 2012, J. Educ. Behav. Stat. 37(4): add one to each
    discordant cell and two to n)."""
    if n == 0:
        return -1.0, 1.0
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - alpha / 2)
    pb, pa = (b_only + 1) / (n + 2), (a_only + 1) / (n + 2)
    diff = pb - pa
    half = z * math.sqrt(max(pb + pa - diff * diff, 0.0) / (n + 2))
    return max(diff - half, -1.0), min(diff + half, 1.0)


def bootstrap_share(pairs: Sequence[tuple[int, int]], *, alpha: float = ALPHA,
                    resamples: int = BOOTSTRAP, seed: int = 0) -> tuple[float, float]:
    """Percentile interval of sum(hits) / sum(totals) over cases resampled with replacement;
    `pairs` are (hits, total) per case with total > 0."""
    if not pairs:
        return 0.0, 1.0
    rng = random.Random(seed)
    n, shares = len(pairs), []
    for _ in range(resamples):
        hits = total = 0
        for _ in range(n):
            h, t = pairs[rng.randrange(n)]
            hits, total = hits + h, total + t
        shares.append(hits / total)
    shares.sort()
    lo = shares[int(alpha / 2 * (resamples - 1))]
    hi = shares[int((1 - alpha / 2) * (resamples - 1))]
    return lo, hi


def call_metrics(cases: Sequence[CaseCalls] | Sequence[Mapping]
                 ) -> tuple[dict[str, float], dict[str, list[float]]]:
    """The four metrics of a set of cases and their 95% intervals (`[low, high]`)."""
    rows = [c.to_dict() if isinstance(c, CaseCalls) else dict(c) for c in cases]
    n = len(rows)
    metrics: dict[str, float] = {}
    intervals: dict[str, list[float]] = {}
    for name in CASE_RATES:
        k = sum(bool(r[name]) for r in rows)
        metrics[name] = k / n if n else 0.0
        intervals[name] = list(wilson(k, n))
    pairs = [(r["facts_stated"], r["facts"]) for r in rows if r["facts"]]
    total = sum(t for _, t in pairs)
    metrics["fact_accuracy"] = sum(h for h, _ in pairs) / total if total else 0.0
    intervals["fact_accuracy"] = list(bootstrap_share(pairs))
    return metrics, intervals
