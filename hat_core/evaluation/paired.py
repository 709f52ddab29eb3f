"""Two models on the same cases: a paired comparison of one per-case outcome.

    a, b = read_case_rows(path_a), read_case_rows(path_b)       # the suites' .cases.jsonl
    cmp = compare_cases(a, b, metric="first_call_exact", suite="t2")
    cmp.diff, cmp.diff_interval, cmp.p_value                     # b - a, 95% CI, McNemar

Cases are paired by `case_id` (suite / group / variant / scenario: the same evaluation seed
plays the same cases for every model). The outcome of a case is `passed` or one of the call
metrics' case rates (`first_tool_right`, `first_call_exact`, `all_calls_exact`, from the
row's `calls`). The test is McNemar's exact test on the discordant pairs; the difference of
the two rates carries a percentile bootstrap interval over the paired cases (seeded). Two
runs that do not cover the same cases are refused, naming how many are missing on each side:
a comparison on a subset would quietly compare other things.

Cases are the unit because the simulator's suites are stratified by scenario kind: every run
plays the same kinds in the same shares, only their products, cities and wordings are drawn.
For "which model does better on this bank" that is the sampling design, and a kind's cases
that go right or wrong together do not widen the interval (they narrow it, if anything).
`cluster="kind"` (`hat eval compare --by kind`) asks another question: would the gain hold
on other kinds like these? A kind is then the independent unit. The test becomes the exact
sign-flip test of the kinds' net gains (`sign_flip_p`: each kind's "b only" minus "a only",
its sign flipped at random under the null; McNemar's exact test when every kind has one
case), the interval a percentile bootstrap over kinds, and the result carries the number of
kinds and the design effect of the difference (`call_metrics.design_effect`). A gain from one
or two kinds cannot be significant that way, however many cases they hold; one kind alone
gives the interval (-1, 1). With few kinds (under about 10) a bootstrap over them is rough:
read its interval beside the exact test.

Rewards are compared the same way, as numbers: `compare_rewards` pairs each case's reward
(the simulator's components from the row's `rewards`, weighted as HSA-RL weighs them, the
CoT length penalty subtracted; `reward.NAME` for one component), gives each mean a percentile
bootstrap interval, the mean difference a paired bootstrap interval, and the Wilcoxon
signed-rank test (`scipy`, Pratt's handling of zero differences) on the per-case differences.
This is how "RL raised the mean reward on held-out scenarios" is checked.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from hat_core.evaluation.call_metrics import (
    ALPHA,
    BOOTSTRAP,
    CASE_RATES,
    bootstrap_share,
    design_effect,
    wilson,
)
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.jsonl import read_jsonl

OUTCOMES = ("passed", *CASE_RATES)
# HSA-RL's default weights (`RlStageConfig.rewards`); the CoT penalty counts negatively
REWARD_WEIGHTS = {"accuracy": 1.0, "effectiveness": 1.0, "tool_rationality": 1.0,
                  "skill_selection": 1.0, "cot_length_penalty": 1.0}
PENALTIES = ("cot_length_penalty",)


@dataclass(frozen=True)
class _Paired:
    """`b` against `a` on `n` paired cases: each side with its interval, and b - a."""

    metric: str
    suite: str | None
    n: int
    a: float
    b: float
    a_interval: tuple[float, float]
    b_interval: tuple[float, float]
    diff: float  # b - a (of the rates, or of the mean rewards)
    diff_interval: tuple[float, float]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class PairedComparison(_Paired):
    """A per-case outcome (a rate) of `b` against `a`, with McNemar's exact test."""

    a_only: int  # cases a got right and b did not
    b_only: int
    p_value: float  # exact, two-sided: McNemar's, or the clusters' sign-flip test
    test: str = "mcnemar-exact"
    clusters: int = 0  # the independent units: n, or the kinds with `cluster="kind"`
    design_effect: float = 1.0  # of the difference b - a over those units


@dataclass(frozen=True)
class PairedMeans(_Paired):
    """The mean per-case reward of `b` against `a`, with the Wilcoxon signed-rank test."""

    a_better: int  # cases where a's reward is higher
    b_better: int
    p_value: float  # Wilcoxon signed-rank, two-sided
    test: str = "wilcoxon-signed-rank"


def case_reward(row: Mapping, metric: str = "reward",
                weights: Mapping[str, float] | None = None) -> float:
    """A case row's reward: `reward` (weighted sum, penalties subtracted) or `reward.NAME`."""
    rewards = row["rewards"]
    if metric != "reward":
        return float(rewards[metric.removeprefix("reward.")])
    weights = REWARD_WEIGHTS if weights is None else weights
    return sum((-w if k in PENALTIES else w) * float(rewards[k]) for k, w in weights.items())


def parse_weights(text: str) -> dict[str, float] | None:
    """`NAME=W,...` (the rewards of `REWARD_WEIGHTS`) as weights; empty text: None."""
    if not text.strip():
        return None
    weights: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        if not sep or name.strip() not in REWARD_WEIGHTS:
            raise EvalInputError(f"reward weight {part!r}: write NAME=W with NAME one of "
                                 + ", ".join(REWARD_WEIGHTS))
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            raise EvalInputError(f"reward weight {part!r}: {value!r} is not a number") from None
    return weights


def outcome(row: Mapping, metric: str) -> bool:
    """The per-case outcome `metric` of a case row."""
    if metric == "passed":
        return bool(row["passed"])
    return bool(row["calls"][metric])


def read_case_rows(path: Path) -> list[dict]:
    """The rows of a suite run's `.cases.jsonl` (or a report JSON's path: the file beside it)."""
    path = Path(path)
    if path.suffix == ".json":
        path = path.with_suffix(".cases.jsonl")
    if not path.is_file():
        raise EvalInputError(f"{path}: no such case file (hat eval run writes "
                             f"REPORT.cases.jsonl beside --out)")
    return [row.data for row in read_jsonl(path)]


def _has(row: Mapping, metric: str) -> bool:
    if metric.startswith("reward"):
        rewards = row.get("rewards", {})
        return metric == "reward" or metric.removeprefix("reward.") in rewards
    return metric == "passed" or metric in row.get("calls", {})


def _by_case(rows: Iterable[Mapping], suite: str | None, metric: str, where: str,
             value=outcome, cluster: str | None = None) -> dict:
    """`{case_id: value}`, or with `cluster` `{case_id: (value, the row's cluster)}` (a row
    without the field is its own cluster)."""
    out: dict = {}
    for row in rows:
        if suite is not None and row.get("suite") != suite:
            continue
        if "case_id" not in row or not _has(row, metric):
            raise EvalInputError(f"{where}: a case row without case_id or {metric!r}")
        got = value(row, metric)
        if cluster is not None:
            key = row.get(cluster)
            got = (got, ("kind", key) if key is not None else ("case", row["case_id"]))
        out[row["case_id"]] = got
    return out


def _paired(rows_a: Sequence[Mapping], rows_b: Sequence[Mapping], suite: str | None,
            metric: str, value=outcome, cluster: str | None = None) -> list[tuple]:
    """`(a, b)` per case both runs played, in case-id order (with `cluster`, `(a, b, the
    first run's cluster)`); other cases are refused."""
    a = _by_case(rows_a, suite, metric, "first run", value, cluster)
    b = _by_case(rows_b, suite, metric, "second run", value, cluster)
    if set(a) != set(b) or not a:
        raise EvalInputError(
            f"the runs do not cover the same cases{f' of {suite}' if suite else ''}: "
            f"{len(set(a) - set(b))} only in the first, {len(set(b) - set(a))} only in the "
            f"second, {len(set(a) & set(b))} shared (evaluate both with the same suites, "
            f"--episodes, --variants and --seed)")
    if cluster is None:
        return [(a[i], b[i]) for i in sorted(a)]
    return [(a[i][0], b[i][0], a[i][1]) for i in sorted(a)]


def sign_flip_p(totals: Sequence[int]) -> float:
    """The exact two-sided p of the sign-flip test of integer cluster totals (each cluster's
    "b only" minus "a only"): the chance, with every nonzero total's sign flipped at random,
    of a sum at least as far from 0 as the observed one. With totals of -1/+1 (one case per
    cluster) it is McNemar's exact p."""
    import numpy as np

    sizes = [abs(int(t)) for t in totals if t]
    if not sizes:
        return 1.0
    top = sum(sizes)
    dist = np.zeros(2 * top + 1)
    dist[top] = 1.0
    for size in sizes:  # the sum's distribution, one cluster at a time (never wraps)
        dist = 0.5 * (np.roll(dist, size) + np.roll(dist, -size))
    reach = np.abs(np.arange(-top, top + 1))
    return float(min(1.0, dist[reach >= abs(int(sum(totals)))].sum()))


def _bootstrap_mean(values: Sequence[float], rng: random.Random,
                    resamples: int) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean of `values`."""
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n
                   for _ in range(resamples))
    return means[int(ALPHA / 2 * resamples)], means[min(resamples - 1,
                                                        int((1 - ALPHA / 2) * resamples))]


def compare_cases(rows_a: Sequence[Mapping], rows_b: Sequence[Mapping], *,
                  metric: str = "first_call_exact", suite: str | None = None,
                  seed: int = 0, resamples: int = BOOTSTRAP,
                  cluster: str | None = None) -> PairedComparison:
    """`b` against `a` on the cases both played (every case of `suite`, when given); with
    `cluster` (a row field: `kind`), the rows' values of it as the independent units (see the
    module docstring)."""
    if metric not in OUTCOMES:
        raise EvalInputError(f"unknown metric {metric!r}; valid: {', '.join(OUTCOMES)}")
    pairs = _paired(rows_a, rows_b, suite, metric, cluster=cluster or "case_id")
    n = len(pairs)
    a_only = sum(x and not y for x, y, _ in pairs)
    b_only = sum(y and not x for x, y, _ in pairs)
    hits_a, hits_b = sum(x for x, _, _ in pairs), sum(y for _, y, _ in pairs)
    keys = [c for _, _, c in pairs]
    diffs = [float(y) - float(x) for x, y, _ in pairs]
    rng = random.Random(seed)
    if cluster is None:
        from statsmodels.stats.contingency_tables import mcnemar

        both = sum(x and y for x, y, _ in pairs)
        table = [[both, a_only], [b_only, n - a_only - b_only - both]]
        p = float(mcnemar(table, exact=True).pvalue)
        lo, hi = _bootstrap_mean(diffs, rng, resamples)
        units, deff = (1.0, 1.0), 1.0
        test, clusters = "mcnemar-exact", n
    else:
        groups: dict = {}
        for d, key in zip(diffs, keys, strict=True):
            total, size = groups.get(key, (0, 0))
            groups[key] = (total + int(d), size + 1)
        p = sign_flip_p([t for t, _ in groups.values()])
        # each kind's net gain over its size, resampled (`bootstrap_share`: a ratio of sums)
        lo, hi = (bootstrap_share(list(groups.values()), resamples=resamples, seed=seed)
                  if len(groups) > 1 else (-1.0, 1.0))   # one kind says nothing of others
        units = (design_effect([float(x) for x, _, _ in pairs], keys)[0],
                 design_effect([float(y) for _, y, _ in pairs], keys)[0])
        deff = design_effect(diffs, keys)[0]
        clusters = len(groups)   # one case per cluster (rows without it): McNemar's test
        test = "mcnemar-exact" if clusters == n else f"sign-flip-exact by {cluster}"
    return PairedComparison(
        metric=metric, suite=suite, n=n, a=hits_a / n, b=hits_b / n,
        a_interval=wilson(hits_a, n, design_effect=units[0]),
        b_interval=wilson(hits_b, n, design_effect=units[1]),
        diff=hits_b / n - hits_a / n, diff_interval=(lo, hi), a_only=a_only, b_only=b_only,
        p_value=p, test=test, clusters=clusters, design_effect=deff)


def compare_rewards(rows_a: Sequence[Mapping], rows_b: Sequence[Mapping], *,
                    metric: str = "reward", suite: str | None = None,
                    weights: Mapping[str, float] | None = None, seed: int = 0,
                    resamples: int = BOOTSTRAP) -> PairedMeans:
    """Mean per-case reward of `b` against `a` on the cases both played (see the module
    docstring): bootstrap intervals and the Wilcoxon signed-rank test."""
    from scipy.stats import wilcoxon

    if metric != "reward" and metric.removeprefix("reward.") not in REWARD_WEIGHTS:
        raise EvalInputError(f"unknown reward {metric!r}; valid: reward, "
                             + ", ".join(f"reward.{k}" for k in REWARD_WEIGHTS))
    pairs = _paired(rows_a, rows_b, suite, metric,
                    lambda row, m: case_reward(row, m, weights))
    n = len(pairs)
    xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
    diffs = [y - x for x, y in pairs]
    p = 1.0 if not any(diffs) else float(wilcoxon(diffs, zero_method="pratt").pvalue)
    rng = random.Random(seed)
    return PairedMeans(
        metric=metric, suite=suite, n=n, a=sum(xs) / n, b=sum(ys) / n,
        a_interval=_bootstrap_mean(xs, rng, resamples),
        b_interval=_bootstrap_mean(ys, rng, resamples), diff=sum(diffs) / n,
        diff_interval=_bootstrap_mean(diffs, rng, resamples),
        a_better=sum(d < 0 for d in diffs), b_better=sum(d > 0 for d in diffs), p_value=p)
