"""Live-Stream QA (`t1`) and Harness-Variant QA (`t2`): judged simulator episodes.

    t1 = T1Suite().run(OraclePolicy(), harness, episodes=30, seed=0)
    t2 = T2Suite().run(policy, harness, episodes=30, variants=4, seed=0, t1_pass_rate=0.93)

`t1` plays the held-out scenarios (`cases.harness_world`: the base bank, plus one stratum's
share of each scenario kind the harness adds, e.g. `bundle` under v3) under the harness as
given; `t2` plays the same scenarios under `variants` HSA variants from the held-out pool
(`HsaConfig(pool="heldout")`: names, templates and wordings no training variant uses), each
with its rename map bound in the simulator. A case passes when the judge finds no failure
(the rule judge, or the `judge` passed in: `hat_core.evaluation.judging`). Headline
metric `pass_rate` (the paper's T1/T2 scores are the same share, times 100), also reported
as `accuracy` (the key `hat_core.release.gates` reads) with `bad_case_rate` = 1 - pass rate; `t2`
also reports `t1_pass_rate` and `gap` = T1 - T2 (it plays T1 itself unless given
`t1_pass_rate`). `mean_accuracy` is the mean of the Accuracy reward, a different number.
Beside the pass rate every result has the call-level metrics `first_tool_right`,
`first_call_exact`, `all_calls_exact` and `fact_accuracy` (`hat_core.evaluation.call_metrics`),
and its summary 95% intervals of each (`intervals`) and the same numbers per scenario kind
(`by_kind`) and, for `t2`, per variant (`variants`).
Every failed case goes to `bad_cases` (a `BadCaseSink`) when one is passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hat_core.errors import ConfigError
from hat_core.evaluation.badcases import BadCaseSink, report_bad_cases
from hat_core.evaluation.call_metrics import METRICS, call_metrics, wilson
from hat_core.evaluation.cases import (
    CaseOutcome,
    Progress,
    cap,
    failure_counts,
    harness_world,
    original_surface,
    pass_rate,
    play_cases,
    variant_surfaces,
)
from hat_core.evaluation.policy import as_policy
from hat_core.evaluation.suites.base import SuiteResult
from hat_core.harness.model import Harness
from hat_core.hsa.config import HsaConfig
from hat_core.inference.protocol import InferenceBackend
from hat_core.sim.judge import Judge
from hat_core.sim.policy import Policy
from hat_core.sim.runner import MAX_STEPS

REWARD_NAMES = ("accuracy", "effectiveness", "tool_rationality", "skill_selection",
                "cot_length_penalty")


def need_harness(suite: str, harness: Harness | None) -> Harness:
    if harness is None:
        raise ConfigError(f"suite {suite} needs a harness (--harness FILE_OR_VERSION)")
    return harness


def reward_means(outcomes: Sequence[CaseOutcome]) -> dict[str, float]:
    n = len(outcomes) or 1
    return {k: sum(o.scores.rewards()[k] for o in outcomes) / n for k in REWARD_NAMES}


def breakdown(outcomes: Sequence[CaseOutcome]) -> dict:
    """Cases, pass rate and the call metrics of a group of cases, with their intervals."""
    passed = sum(o.verdict.passed for o in outcomes)
    calls, intervals = call_metrics([o.calls for o in outcomes])
    return {"cases": len(outcomes), "pass_rate": pass_rate(outcomes), **calls,
            "intervals": {"pass_rate": list(wilson(passed, len(outcomes))), **intervals}}


def by_key(outcomes: Sequence[CaseOutcome], key) -> dict[str, dict]:
    """`breakdown` per value of `key(outcome)`, in first-seen order."""
    groups: dict[str, list[CaseOutcome]] = {}
    for o in outcomes:
        groups.setdefault(key(o), []).append(o)
    return {k: breakdown(v) for k, v in groups.items()}


def qa_result(suite: str, outcomes: Sequence[CaseOutcome], extra: dict | None = None,
              summary: dict | None = None) -> SuiteResult:
    """Pass rate, the call metrics (`hat_core.evaluation.call_metrics`), mean rewards,
    failure counts, 95% intervals, a breakdown per scenario kind and one row per case."""
    rate = pass_rate(outcomes)
    overall = breakdown(outcomes)
    metrics = {"pass_rate": rate, "accuracy": rate, "bad_case_rate": 1.0 - rate if outcomes
               else 0.0, **{k: overall[k] for k in METRICS}, **(extra or {}),
               **{f"mean_{k}": v for k, v in reward_means(outcomes).items()}}
    full = {"cases": len(outcomes), "passed": sum(o.verdict.passed for o in outcomes),
            "failures": failure_counts(outcomes), "intervals": overall["intervals"],
            "by_kind": by_key(outcomes, lambda o: o.scenario.kind), **(summary or {})}
    return SuiteResult(suite, metrics, full, tuple(o.row() for o in outcomes))


@dataclass(frozen=True)
class T1Suite:
    """Held-out scenarios under the original harness, judged."""

    name: str = "t1"

    def play(self, model: Policy | InferenceBackend, harness: Harness, *, episodes: int = 30,
             seed: int = 0, max_steps: int = MAX_STEPS, max_tokens: int = 512,
             progress: Progress | None = None, judge: Judge | None = None
             ) -> list[CaseOutcome]:
        catalog, scenarios = harness_world(harness, seed, episodes)
        return play_cases(self.name, [original_surface(harness)], scenarios, catalog,
                          as_policy(model, max_tokens=max_tokens), max_steps=max_steps,
                          progress=progress, judge=judge)

    def run(self, model: Policy | InferenceBackend, harness: Harness | None, *,
            episodes: int = 30, variants: int = 4, seed: int = 0, max_steps: int = MAX_STEPS,
            max_tokens: int = 512, progress: Progress | None = None,
            bad_cases: BadCaseSink | None = None, limit: int | None = None,
            outcomes: Sequence[CaseOutcome] | None = None,
            judge: Judge | None = None) -> SuiteResult:
        """`outcomes`: already played (and judged) T1 cases instead of playing them again."""
        h = need_harness(self.name, harness)
        episodes = cap(episodes, limit)
        played = list(outcomes) if outcomes is not None else self.play(
            model, h, episodes=episodes, seed=seed, max_steps=max_steps,
            max_tokens=max_tokens, progress=progress, judge=judge)
        report_bad_cases(played, bad_cases)
        return qa_result(self.name, played, summary={"seed": seed, "world": "hat-eval"})


@dataclass(frozen=True)
class T2Suite:
    """The T1 scenarios under held-out-pool HSA variants; the T1-T2 gap."""

    name: str = "t2"

    def run(self, model: Policy | InferenceBackend, harness: Harness | None, *,
            episodes: int = 30, variants: int = 4, seed: int = 0, max_steps: int = MAX_STEPS,
            max_tokens: int = 512, progress: Progress | None = None,
            bad_cases: BadCaseSink | None = None, limit: int | None = None,
            t1_pass_rate: float | None = None, judge: Judge | None = None) -> SuiteResult:
        h = need_harness(self.name, harness)
        episodes = cap(episodes, limit)
        policy = as_policy(model, max_tokens=max_tokens)
        catalog, scenarios = harness_world(h, seed, episodes)
        surfaces = variant_surfaces(h, variants, seed, HsaConfig(pool="heldout"))
        total = len(surfaces) * len(scenarios) + (len(scenarios) if t1_pass_rate is None else 0)
        outcomes = play_cases(self.name, surfaces, scenarios, catalog, policy,
                              max_steps=max_steps, progress=progress, total=total, judge=judge)
        if t1_pass_rate is None:
            t1 = play_cases("t1", [original_surface(h)], scenarios, catalog, policy,
                            max_steps=max_steps, progress=_relabel(progress, self.name),
                            done=len(outcomes), total=total, judge=judge)
            t1_pass_rate = pass_rate(t1)
        report_bad_cases(outcomes, bad_cases)
        t2 = pass_rate(outcomes)
        per_variant = {s.variant_id: {**breakdown([o for o in outcomes if o.surface is s]),
                                      "transforms": list(s.variant.transforms)}
                       for s in surfaces if s.variant is not None}
        return qa_result(self.name, outcomes, {"t1_pass_rate": t1_pass_rate,
                                               "gap": t1_pass_rate - t2},
                         {"seed": seed, "world": "hat-eval", "pool": "heldout",
                          "variants": per_variant})


def _relabel(progress: Progress | None, suite: str) -> Progress | None:
    if progress is None:
        return None
    return lambda _name, done, total: progress(suite, done, total)
