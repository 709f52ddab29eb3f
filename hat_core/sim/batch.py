"""Many episodes at once: a seeded simulation run and its summary.

    results = simulate(harness, make_policy("oracle", harness, rng), episodes=100, seed=7)
    summary = summarise(results)  # pass rate, mean of each reward, failure counts

The seed fixes the catalog and the scenario bank: `random.Random(seed)` builds the catalog,
then the scenarios, in that order; episode k is the same for any `episodes > k`.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from hat_core.harness.model import Harness
from hat_core.sim.catalog import Catalog, generate_catalog
from hat_core.sim.episode import Episode
from hat_core.sim.judge import FAILURE_TYPES, Verdict, verdict_of
from hat_core.sim.policy import (
    POLICIES,
    MemorisingPolicy,
    OraclePolicy,
    Policy,
    RandomPolicy,
)
from hat_core.sim.runner import run_episode
from hat_core.sim.scenarios import Scenario, generate_scenarios
from hat_core.sim.scoring import Scores, score_episode

CATALOG_SIZE = 24


@dataclass(frozen=True)
class Result:
    """One scored episode."""

    scenario: Scenario
    episode: Episode
    scores: Scores
    verdict: Verdict


@dataclass(frozen=True)
class Summary:
    episodes: int
    pass_rate: float
    rewards: dict[str, float]
    failures: dict[str, int]

    def to_dict(self) -> dict:
        return {"episodes": self.episodes, "pass_rate": self.pass_rate,
                "rewards": self.rewards, "failures": self.failures}


def world(seed: int, episodes: int, size: int = CATALOG_SIZE,
          extra: Mapping[str, int] | None = None) -> tuple[Catalog, tuple[Scenario, ...]]:
    """The catalog and the scenario bank of a seed; `extra` scenarios of the kinds a harness
    adds go after the bank (`scenarios.extra_counts`; none: the bank as it always was)."""
    rng = random.Random(seed)
    catalog = generate_catalog(rng, size=size)
    return catalog, generate_scenarios(catalog, rng, episodes, extra)


def make_policy(name: str, memorised: Harness | None = None,
                rng: random.Random | None = None) -> Policy:
    """A policy by name (`POLICIES`); `memorising` needs the memorised harness."""
    if name == "oracle":
        return OraclePolicy()
    if name == "random":
        return RandomPolicy(rng or random.Random(0))
    if name == "memorising" and memorised is not None:
        return MemorisingPolicy(memorised)
    raise ValueError(f"unknown policy {name!r}; valid: {', '.join(POLICIES)}"
                     + (" (memorising needs a memorised harness)" if name == "memorising"
                        else ""))


def play(harness: Harness, scenario: Scenario, catalog: Catalog, policy: Policy,
         rename_map: Mapping[str, Mapping[str, str]] | None = None) -> Result:
    """Run and score one episode."""
    episode = run_episode(harness, scenario, catalog, policy, rename_map=rename_map)
    scores = score_episode(episode, scenario, harness)
    return Result(scenario, episode, scores, verdict_of(scores))


def simulate(harness: Harness, policy: Policy, *, episodes: int, seed: int,
             rename_map: Mapping[str, Mapping[str, str]] | None = None) -> list[Result]:
    """`episodes` scored episodes of the seed's scenario bank."""
    catalog, scenarios = world(seed, episodes)
    return [play(harness, s, catalog, policy, rename_map) for s in scenarios]


def summarise(results: list[Result]) -> Summary:
    """Pass rate, the mean of each reward and the count of each failure type."""
    n = len(results) or 1
    names = ("accuracy", "effectiveness", "tool_rationality", "skill_selection",
             "cot_length_penalty")
    means = {k: sum(r.scores.rewards()[k] for r in results) / n for k in names}
    counts = Counter(r.verdict.failure for r in results if not r.verdict.passed)
    return Summary(episodes=len(results),
                   pass_rate=sum(r.verdict.passed for r in results) / n,
                   rewards=means,
                   failures={f: counts.get(f, 0) for f in FAILURE_TYPES})
