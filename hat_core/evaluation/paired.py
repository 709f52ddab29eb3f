"""Two models on the same cases: a paired comparison of one per-case outcome.

    a, b = read_case_rows(path_a), read_case_rows(path_b)       # the suites' .cases.jsonl
    cmp = compare_cases(a, b, metric="first_call_exact", suite="t2")
    cmp.diff, cmp.diff_interval, cmp.p_value                     # b - a, 95% CI, McNemar

Cases are paired by `case_id` (suite / group / variant / scenario: the same evaluation seed
plays the same cases for every model). The outcome of a case is `passed` or one of the call
metrics' case rates (`first_tool_right`, `first_call_exact`, `all_calls_exact`, from the
row's `calls`). The test is McNemar's exact test on the discordant pairs (`statsmodels`:
a binomial test of "b only" against "a only"); the difference of the two rates carries a
percentile bootstrap interval over the paired cases (seeded). Two runs that do not cover the
same cases are refused, naming how many are missing on each side: a comparison on a subset
would quietly compare other things.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from hat_core.evaluation.call_metrics import ALPHA, BOOTSTRAP, CASE_RATES, wilson
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.jsonl import read_jsonl

OUTCOMES = ("passed", *CASE_RATES)


@dataclass(frozen=True)
class PairedComparison:
    """`b` against `a` on `n` paired cases."""

    metric: str
    suite: str | None
    n: int
    a: float
    b: float
    a_interval: tuple[float, float]
    b_interval: tuple[float, float]
    diff: float  # b - a
    diff_interval: tuple[float, float]
    a_only: int  # cases a got right and b did not
    b_only: int
    p_value: float  # McNemar, exact, two-sided
    test: str = "mcnemar-exact"

    def to_dict(self) -> dict:
        return asdict(self)


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


def _by_case(rows: Iterable[Mapping], suite: str | None, metric: str,
             where: str) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for row in rows:
        if suite is not None and row.get("suite") != suite:
            continue
        if "case_id" not in row or (metric != "passed" and metric not in row.get("calls", {})):
            raise EvalInputError(f"{where}: a case row without case_id or {metric!r}")
        out[row["case_id"]] = outcome(row, metric)
    return out


def compare_cases(rows_a: Sequence[Mapping], rows_b: Sequence[Mapping], *,
                  metric: str = "first_call_exact", suite: str | None = None,
                  seed: int = 0, resamples: int = BOOTSTRAP) -> PairedComparison:
    """`b` against `a` on the cases both played (every case of `suite`, when given)."""
    from statsmodels.stats.contingency_tables import mcnemar

    if metric not in OUTCOMES:
        raise EvalInputError(f"unknown metric {metric!r}; valid: {', '.join(OUTCOMES)}")
    a = _by_case(rows_a, suite, metric, "first run")
    b = _by_case(rows_b, suite, metric, "second run")
    if set(a) != set(b) or not a:
        raise EvalInputError(
            f"the runs do not cover the same cases{f' of {suite}' if suite else ''}: "
            f"{len(set(a) - set(b))} only in the first, {len(set(b) - set(a))} only in the "
            f"second, {len(set(a) & set(b))} shared (evaluate both with the same suites, "
            f"--episodes, --variants and --seed)")
    ids = sorted(a)
    pairs = [(a[i], b[i]) for i in ids]
    n = len(pairs)
    a_only = sum(x and not y for x, y in pairs)
    b_only = sum(y and not x for x, y in pairs)
    both = sum(x and y for x, y in pairs)
    neither = n - a_only - b_only - both
    p = float(mcnemar([[both, a_only], [b_only, neither]], exact=True).pvalue)
    hits_a, hits_b = sum(x for x, _ in pairs), sum(y for _, y in pairs)
    rate_a, rate_b = hits_a / n, hits_b / n
    rng = random.Random(seed)
    diffs = sorted(sum(y - x for x, y in (pairs[rng.randrange(n)] for _ in range(n))) / n
                   for _ in range(resamples))
    lo = diffs[int(ALPHA / 2 * resamples)]
    hi = diffs[min(resamples - 1, int((1 - ALPHA / 2) * resamples))]
    return PairedComparison(
        metric=metric, suite=suite, n=n, a=rate_a, b=rate_b,
        a_interval=wilson(hits_a, n), b_interval=wilson(hits_b, n),
        diff=rate_b - rate_a, diff_interval=(lo, hi), a_only=a_only, b_only=b_only,
        p_value=p)
