"""Simulator cases for the evaluation suites: the held-out world, surfaces, played cases.

    catalog, scenarios = eval_world(seed=0, episodes=30)
    catalog, scenarios = harness_world(h, seed=0, episodes=30)  # + the kinds h adds (T1, T2)
    surfaces = variant_surfaces(h, 4, seed=0, config=HsaConfig(pool="heldout"))
    outcomes = play_cases("t2", surfaces, scenarios, catalog, policy)

**Held-out scenarios.** Training data builds draw their catalog and scenarios from
`random.Random(seed)` with an integer seed (`hat_core.sim.batch.world`, `hat data build`).
The suites draw theirs from `random.Random("hat-eval:<seed>")`, a string-seeded stream no
integer seed reproduces, so no evaluation case (catalog, prices, wording) is a training case
of any data build. Scenario ids (`s00000-price`, ...) are positions in a bank and repeat
across worlds; a case is named by suite, surface and scenario id (`t2/h001/s00003-price`).

A `CaseOutcome` is one scenario played on one surface and judged (by the rule judge on the
computed scores, or by an LLM judge that the judge gate let in: `evaluation.judging`); its
`row()` is the per-case result kept in reports: the verdict and scores, the viewer's turns
(`viewer`) and the `transcript` after the harness prompt (assistant messages with their tool
calls, tool results, hook feedback; no reasoning), which a blind pairwise review of two runs
shows (`hat_core.evidence.review_from_runs`). Failed ones become bad cases
(`hat_core.evaluation.badcases`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hat_core.data.rollout import Surface, surface_of
from hat_core.evaluation.call_metrics import CaseCalls, case_calls
from hat_core.evaluation.judging import judge_name
from hat_core.harness.model import Harness
from hat_core.hsa.augment import augment_many
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.variant import RenameMap
from hat_core.sim.batch import CATALOG_SIZE
from hat_core.sim.binding import canonical_params
from hat_core.sim.catalog import Catalog, generate_catalog
from hat_core.sim.episode import Episode
from hat_core.sim.judge import Judge, Verdict, verdict_of
from hat_core.sim.policy import Policy
from hat_core.sim.runner import MAX_STEPS, run_episode
from hat_core.sim.scenarios import Scenario, extra_counts, generate_scenarios, kinds_for
from hat_core.sim.scoring import Scores, score_episode

Progress = Callable[[str, int, int], None]  # (suite, done, total)
EVAL_SEED_PREFIX = "hat-eval"


def eval_world(seed: int, episodes: int, size: int = CATALOG_SIZE,
               extra: Mapping[str, int] | None = None) -> tuple[Catalog, tuple[Scenario, ...]]:
    """The held-out catalog and scenario bank of an evaluation seed (see module doc), with
    `extra` scenarios of the kinds a harness adds after the bank (`harness_world`)."""
    rng = random.Random(f"{EVAL_SEED_PREFIX}:{seed}")
    catalog = generate_catalog(rng, size=size)
    return catalog, generate_scenarios(catalog, rng, episodes, extra)


def world_ref(seed: int, size: int = CATALOG_SIZE) -> dict:
    """How to rebuild the catalog of `eval_world(seed, ..., size)`: the string seed of its
    rng and the catalog size (`hat_core.sim.catalog.seeded_catalog`). Bad cases carry it as
    `episode["world"]`, so a reviewed case can be replayed in its own shop."""
    return {"seed": f"{EVAL_SEED_PREFIX}:{seed}", "catalog_size": size}


def harness_world(harness: Harness, seed: int, episodes: int
                  ) -> tuple[Catalog, tuple[Scenario, ...]]:
    """`eval_world` stratified over the kinds `harness` supports: the base bank of `episodes`
    (the same for every harness), then one stratum's share of each kind it adds
    (`scenarios.extra_counts`): 30 episodes under v3 are 32 cases, 2 of them `bundle`."""
    return eval_world(seed, episodes, extra=extra_counts(kinds_for(harness), episodes))


def original_surface(harness: Harness) -> Surface:
    """The harness as given, with its parameters bound to the simulator's canonical ones."""
    return Surface("original", "original", harness,
                   RenameMap().binding_map(canonical_params(harness)))


def variant_surfaces(harness: Harness, n: int, seed: int, config: HsaConfig,
                     prefix: str = "h") -> list[Surface]:
    """`n` HSA variants of `harness` (seeded by `variant_seed(seed, i, config.pool)`)."""
    canonical = canonical_params(harness)
    out = []
    for i, v in enumerate(augment_many(harness, n, seed, config)):
        s = surface_of(v, i, canonical)
        out.append(Surface(f"{prefix}{i:03d}", s.pool, s.harness, s.binding_map, v))
    return out


@dataclass(frozen=True)
class CaseOutcome:
    """One scenario played on one surface, scored and judged."""

    suite: str
    surface: Surface
    scenario: Scenario
    episode: Episode
    scores: Scores
    verdict: Verdict
    group: str = ""  # a suite's sub-family (e.g. the robustness transform)
    judge: str = "rule"  # who gave the verdict: `rule` or `llm:<model>`

    @property
    def calls(self) -> CaseCalls:
        """Right first tool, exact first call, all calls exact, facts stated."""
        return case_calls(self.scenario, self.episode, self.scores)

    @property
    def case_id(self) -> str:
        parts = [self.suite, self.group, self.surface.variant_id, self.scenario.id]
        return "/".join(p for p in parts if p)

    def row(self) -> dict:
        """The per-case result: verdict, scores, viewer turns and the transcript (no system
        prompt, no reasoning)."""
        turns = self.episode.turns
        return {
            "case_id": self.case_id, "suite": self.suite, "group": self.group or None,
            "variant_id": self.surface.variant_id, "pool": self.surface.pool,
            "transforms": list(self.surface.variant.transforms) if self.surface.variant else [],
            "scenario_id": self.scenario.id, "kind": self.scenario.kind,
            "passed": self.verdict.passed, "failure_type": self.verdict.failure,
            "calls": self.calls.to_dict(),
            "failures": list(self.verdict.failures), "reason": self.verdict.reason,
            "judge": self.judge,
            "rewards": self.scores.rewards(), "retries": self.episode.retries,
            "reasoning_tokens": [list(t.reasoning_tokens) for t in turns],
            "viewer": [t.user for t in self.scenario.turns],
            "transcript": transcript(self.episode.messages),
        }


def transcript(messages: Sequence[dict]) -> list[dict]:
    """An episode's messages after the harness's system prompt, without reasoning."""
    return [{k: v for k, v in m.items() if k != "reasoning_content"} for m in messages[1:]]


def play_case(suite: str, surface: Surface, scenario: Scenario, catalog: Catalog,
              policy: Policy, *, group: str = "", max_steps: int = MAX_STEPS,
              judge: Judge | None = None) -> CaseOutcome:
    """Play one scenario on one surface and judge it (`judge`, else the rule judge)."""
    episode = run_episode(surface.harness, scenario, catalog, policy,
                          rename_map=surface.binding_map, max_steps=max_steps)
    scores = score_episode(episode, scenario, surface.harness)
    verdict = verdict_of(scores) if judge is None else judge.judge(episode, scenario,
                                                                    surface.harness)
    return CaseOutcome(suite, surface, scenario, episode, scores, verdict, group,
                       judge_name(judge))


def play_cases(suite: str, surfaces: Sequence[Surface], scenarios: Sequence[Scenario],
               catalog: Catalog, policy: Policy, *, group: str = "",
               max_steps: int = MAX_STEPS, progress: Progress | None = None,
               done: int = 0, total: int | None = None,
               judge: Judge | None = None) -> list[CaseOutcome]:
    """Every surface x scenario, in that order; `progress(suite, done, total)` after each.
    A `BackendPolicy` whose backend answers in batches (`batch_size` > 1, `chat_batch`)
    plays that many cases side by side in lockstep (`hat_core.inference.batching`)."""
    total = total if total is not None else len(surfaces) * len(scenarios)
    pairs = [(surface, scenario) for surface in surfaces for scenario in scenarios]
    workers = _lockstep_workers(policy)
    if workers > 1 and len(pairs) > 1:
        return _play_in_lockstep(suite, pairs, catalog, policy, workers, group=group,
                                 max_steps=max_steps, progress=progress, done=done,
                                 total=total, judge=judge)
    out = []
    for surface, scenario in pairs:
        out.append(play_case(suite, surface, scenario, catalog, policy, group=group,
                             max_steps=max_steps, judge=judge))
        if progress is not None:
            progress(suite, done + len(out), total)
    return out


def _lockstep_workers(policy: Policy) -> int:
    from hat_core.evaluation.policy import BackendPolicy
    from hat_core.inference.batching import batch_size_of

    return batch_size_of(policy.backend) if isinstance(policy, BackendPolicy) else 1


def _play_in_lockstep(suite: str, pairs: Sequence[tuple[Surface, Scenario]], catalog: Catalog,
                      policy: Policy, workers: int, *, group: str, max_steps: int,
                      progress: Progress | None, done: int, total: int,
                      judge: Judge | None) -> list[CaseOutcome]:
    from hat_core.inference.batching import play_in_lockstep

    finished = [0]

    def job(surface: Surface, scenario: Scenario):
        def run(lockstep) -> CaseOutcome:
            return play_case(suite, surface, scenario, catalog, policy.with_backend(lockstep),
                             group=group, max_steps=max_steps, judge=judge)
        return run

    def on_done(_i: int, _outcome: CaseOutcome) -> None:
        finished[0] += 1
        if progress is not None:
            progress(suite, done + finished[0], total)

    return play_in_lockstep([job(s, c) for s, c in pairs], policy.backend, workers=workers,
                            on_done=on_done)


def pass_rate(outcomes: Sequence[CaseOutcome]) -> float:
    """Share of passed cases (0 for none)."""
    return sum(o.verdict.passed for o in outcomes) / len(outcomes) if outcomes else 0.0


def failure_counts(outcomes: Sequence[CaseOutcome]) -> dict[str, int]:
    """How many failed cases had each failure type (as the verdict's first failure)."""
    counts: dict[str, int] = {}
    for o in outcomes:
        if not o.verdict.passed:
            key = o.verdict.failure or "error"
            counts[key] = counts.get(key, 0) + 1
    return counts


def cap(episodes: int, limit: int | None) -> int:
    """`episodes`, at most `limit` (the generic per-suite item cap) when one is given."""
    return min(episodes, limit) if limit else episodes
