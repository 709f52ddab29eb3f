"""Multi-seed aggregates of the reproduction table: pooled rates, pooled paired tests, families.

    rate = pooled_rate(results, "hat", "t2", "first_call_exact")     # k / n over seeds, Wilson
    test = pooled_paired(results, "fixed_sft", "hat", "t2", "first_call_exact")  # McNemar
    kinds = pooled_families(results, "hat", "t1.kind", "first_call_exact")

`results` is what `hat_core.repro.run.run_repro` returns (or `report.merge_results`); every
number comes from the arms' per-case outcomes and family counts (`hat_core.repro.outcomes`).

- **Per seed and pooled.** A rate per seed gives the mean and the sample standard deviation
  over seeds (the spread between seeds: data, training and eval world); the pooled rate
  counts every seed's cases together (k of n) with a Wilson 95% interval (the sampling
  uncertainty of all cases played).
- **Paired over seeds.** Two arms of one seed played the same cases (the seed's eval world).
  The pairs of every seed are pooled: both right, only a, only b, neither, summed over seeds,
  and McNemar's exact test runs on the pooled discordant counts (a binomial test of "b only"
  against "a only", `statsmodels`); the difference b - a carries the Bonett-Price interval
  of those counts (`call_metrics.paired_difference_interval`). Cases of different seeds are
  never paired with each other; a seed whose two arms did not play the same cases is
  refused, naming it.
- **Families.** T1 per scenario kind, T2 per variant (a variant is named with its eval world,
  `h000@1`, since each world draws its own held-out variants) and IFEval per instruction
  family, each pooled over seeds with its Wilson interval.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from itertools import combinations

from hat_core.errors import ConfigError, Problem
from hat_core.evaluation.call_metrics import paired_difference_interval, wilson
from hat_core.repro.config import ARMS
from hat_core.repro.outcomes import PAIRED_SUITES, hits

# (suite, outcome) pairs the report aggregates; IFEval cases have `passed` only (IFE-P)
RATES = tuple((suite, outcome) for suite in PAIRED_SUITES
              for outcome in (("passed",) if suite == "ifeval"
                              else ("passed", "first_tool_right", "first_call_exact",
                                    "all_calls_exact")))


@dataclass(frozen=True)
class PooledRate:
    """One arm's rate on one suite: per seed, mean ± sample std, and pooled with Wilson."""

    arm: str
    suite: str
    outcome: str
    per_seed: dict[str, float]
    mean: float
    std: float | None  # None for one seed
    hits: int
    cases: int
    rate: float
    interval: tuple[float, float]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class PooledPaired:
    """`b` against `a` on the same cases, the pairs of every seed pooled (module doc)."""

    a: str
    b: str
    suite: str
    outcome: str
    seeds: int
    cases: int
    both: int
    a_only: int
    b_only: int
    neither: int
    a_rate: float
    b_rate: float
    diff: float  # b - a
    p_value: float  # McNemar, exact, two-sided, on the pooled discordant counts
    diff_interval: tuple[float, float] = (-1.0, 1.0)  # Bonett-Price 95% of b - a
    test: str = "mcnemar-exact"

    def to_dict(self) -> dict:
        return asdict(self)


def pooled_rate(results: dict, arm: str, suite: str, outcome: str) -> PooledRate | None:
    """`arm`'s `outcome` on `suite` over the seeds that have it; None when none has."""
    per_seed: dict[str, tuple[int, int]] = {}
    for name, seed in results["seeds"].items():
        bits = _bits(seed, arm, suite, outcome)
        if bits:
            per_seed[name] = hits(bits)
    if not per_seed:
        return None
    rates = [k / n for k, n in per_seed.values()]
    k, n = sum(k for k, _ in per_seed.values()), sum(n for _, n in per_seed.values())
    mean, std = mean_std(rates)
    return PooledRate(arm, suite, outcome, {s: k / n for s, (k, n) in per_seed.items()},
                      mean, std, k, n, k / n, wilson(k, n))


def mean_std(values: list[float]) -> tuple[float, float | None]:
    """Mean and sample std (None for fewer than two values)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def pooled_paired(results: dict, a: str, b: str, suite: str, outcome: str
                  ) -> PooledPaired | None:
    """McNemar on the pairs of every seed where both arms have the outcome (module doc)."""
    both = a_only = b_only = neither = seeds = 0
    for name, seed in results["seeds"].items():
        xa, xb = _bits(seed, a, suite, outcome), _bits(seed, b, suite, outcome)
        if not xa or not xb:
            continue
        if _ids(seed, a, suite) != _ids(seed, b, suite):
            raise ConfigError(f"seed {name}: {a} and {b} did not play the same {suite} cases",
                              [Problem(f"seeds.{name}.eval.{b}.outcomes.{suite}",
                                       "case ids differ; pairs need the same eval world")])
        seeds += 1
        for x, y in zip(xa, xb, strict=True):
            both += x == y == "1"
            a_only += x == "1" and y == "0"
            b_only += x == "0" and y == "1"
            neither += x == y == "0"
    n = both + a_only + b_only + neither
    if not n:
        return None
    return PooledPaired(a, b, suite, outcome, seeds, n, both, a_only, b_only, neither,
                        (both + a_only) / n, (both + b_only) / n, (b_only - a_only) / n,
                        mcnemar_exact(a_only, b_only),
                        paired_difference_interval(b_only, a_only, n))


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value of the discordant counts (1.0 when there are none)."""
    from statsmodels.stats.contingency_tables import mcnemar

    if a_only + b_only == 0:
        return 1.0
    return float(mcnemar([[0, a_only], [b_only, 0]], exact=True).pvalue)


def pooled_families(results: dict, arm: str, key: str, outcome: str = "passed"
                    ) -> dict[str, dict]:
    """`{group: {hits, cases, rate, interval}}` of `arm` pooled over seeds. `key`: `t1.kind`,
    `t2.variant` (groups `h000@<eval world>`) or `ifeval.family` (`outcome` `followed`, per
    instruction, or `prompts_passed`, per prompt carrying the family)."""
    out: dict[str, list[int]] = {}
    for seed in results["seeds"].values():
        entry = seed["eval"].get(arm, {})
        world = entry.get("eval_seed", seed.get("eval_seed"))
        for group, counts in entry.get("families", {}).get(key, {}).items():
            name = f"{group}@{world}" if key == "t2.variant" else group
            total = counts["instructions" if outcome == "followed"
                           else "prompts" if outcome == "prompts_passed" else "cases"]
            acc = out.setdefault(name, [0, 0])
            acc[0] += counts[outcome]
            acc[1] += total
    return {g: {"hits": k, "cases": n, "rate": k / n if n else 0.0,
                "interval": list(wilson(k, n))} for g, (k, n) in out.items()}


def aggregates(results: dict) -> dict:
    """Every pooled rate, every pair of arms' pooled paired test, and the families: the
    `aggregates` section of `results.json`."""
    arms = [a for a in ARMS if any(a in s["eval"] for s in results["seeds"].values())]
    rates = {a: {f"{s}.{o}": r.to_dict() for s, o in RATES
                 if (r := pooled_rate(results, a, s, o)) is not None} for a in arms}
    paired = [p.to_dict() for a, b in combinations(arms, 2) for s, o in RATES
              if (p := pooled_paired(results, a, b, s, o)) is not None]
    families = {a: {"t1.kind": {o: pooled_families(results, a, "t1.kind", o)
                                for o in ("passed", "first_call_exact")},
                    "t2.variant": {o: pooled_families(results, a, "t2.variant", o)
                                   for o in ("passed", "first_call_exact")},
                    "ifeval.family": {o: pooled_families(results, a, "ifeval.family", o)
                                      for o in ("followed", "prompts_passed")}}
                for a in arms}
    return {"pooled": rates, "paired": paired, "families": families}


def _bits(seed: dict, arm: str, suite: str, outcome: str) -> str:
    return seed["eval"].get(arm, {}).get("outcomes", {}).get(suite, {}).get(outcome, "")


def _ids(seed: dict, arm: str, suite: str) -> list[str]:
    return seed["eval"][arm]["outcomes"][suite]["case_ids"]
