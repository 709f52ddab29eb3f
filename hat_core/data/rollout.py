"""Rollouts: a teacher plays the scenarios on the original harness and on K HSA variants.

    surfaces = training_surfaces(harness, config)          # original + K train-pool variants
    rollouts = play_all(surfaces, scenarios, catalog, teacher, samples=best_of_n)
    rollouts = play_all(surfaces, scenarios, catalog, teacher, per_surface=6, seed=0)

By default every scenario runs on every surface. With `per_surface = n` each surface plays n
scenarios instead, dealt in consecutive blocks from one seeded stream that takes the scenario
kinds in turn (`deal`): a large variant pool then costs n rollouts per variant, not the whole
bank, and every kind keeps an equal share (`scenarios_per_surface` in the data config).

A `Surface` is one harness the teacher is shown, with the simulator binding map that ties
its renamed parameters back to the canonical ones. Each `Rollout` is scored against the
scenario's ground truth (`hat_core.sim.scoring`) under its own surface. Teachers with
`concurrency > 1` play episodes on a thread pool; the order of the result never depends on
it. `make_variants` is the one place that calls HSA.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from hat_core.data.config import DataConfig
from hat_core.data.teacher import Teacher, TeacherError
from hat_core.data.trajectory import Trajectory
from hat_core.harness.model import Harness
from hat_core.harness.render import render_tools
from hat_core.hsa.augment import augment_many
from hat_core.hsa.config import config_from_data
from hat_core.hsa.variant import RenameMap, Variant
from hat_core.sim.binding import canonical_params
from hat_core.sim.catalog import Catalog
from hat_core.sim.episode import Episode
from hat_core.sim.runner import run_episode
from hat_core.sim.scenarios import Scenario
from hat_core.sim.scoring import Scores, score_episode

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Surface:
    """One harness shown to the teacher: the original or an HSA variant."""

    variant_id: str
    pool: str
    harness: Harness
    binding_map: Mapping[str, Mapping[str, str]]
    variant: Variant | None = None


@dataclass(frozen=True)
class Rollout:
    """One played and scored episode (`error` set when the teacher failed)."""

    surface: Surface
    scenario: Scenario
    sample: int
    episode: Episode | None
    scores: Scores | None
    error: str | None = None


def make_variants(harness: Harness, n: int, seed: int, hsa: Mapping, pool: str) -> list[Variant]:
    """`n` HSA variants from `pool` (variant i seeded by `variant_seed(seed, i, pool)`)."""
    config = config_from_data({**dict(hsa), "pool": pool}, source="data config: hsa")
    return augment_many(harness, n, seed, config)


def surface_of(variant: Variant, index: int, canonical: Mapping) -> Surface:
    prefix = "h" if variant.pool == "heldout" else "v"
    return Surface(f"{prefix}{index:03d}", variant.pool, variant.harness,
                   variant.rename_map.binding_map(canonical), variant)


def training_surfaces(harness: Harness, config: DataConfig) -> list[Surface]:
    """The original harness plus `config.variants` training-pool variants."""
    canonical = canonical_params(harness)
    original = Surface("original", "original", harness, RenameMap().binding_map(canonical))
    variants = make_variants(harness, config.variants, config.seed, config.hsa, "train")
    return [original, *(surface_of(v, i, canonical) for i, v in enumerate(variants))]


def heldout_surfaces(harness: Harness, config: DataConfig) -> list[Surface]:
    """`splits.heldout_variants` held-out-pool variants, reserved for evaluation."""
    canonical = canonical_params(harness)
    variants = make_variants(harness, config.splits.heldout_variants, config.seed + 1_000_003,
                             config.hsa, "heldout")
    return [surface_of(v, i, canonical) for i, v in enumerate(variants)]


def unique_scenarios(scenarios: Sequence[Scenario]) -> tuple[list[Scenario], int]:
    """Scenarios with the same ground truth as an earlier one (same product, wording and
    truth under another id) dropped before any teacher call; how many were dropped."""
    seen: set[str] = set()
    out = []
    for sc in scenarios:
        key = repr((sc.kind, sc.product_id, sc.turns))
        if key not in seen:
            seen.add(key)
            out.append(sc)
    return out, len(scenarios) - len(out)


def play(surface: Surface, scenario: Scenario, catalog: Catalog, teacher: Teacher,
         sample: int = 0) -> Rollout:
    """Play and score one episode."""
    try:
        episode = run_episode(surface.harness, scenario, catalog, teacher,
                              rename_map=surface.binding_map)
    except TeacherError as exc:
        return Rollout(surface, scenario, sample, None, None, error=exc.report())
    return Rollout(surface, scenario, sample, episode,
                   score_episode(episode, scenario, surface.harness))


def deal(surfaces: Sequence[Surface], scenarios: Sequence[Scenario], per_surface: int,
         seed: int) -> list[tuple[Surface, Scenario]]:
    """The (surface, scenario) pairs to play: all of them when `per_surface` is 0 or covers
    the bank, else `per_surface` scenarios per surface, dealt from one seeded stream that
    takes the scenario kinds in turn. Every kind then gets the same share of the rollouts
    even when the bank holds few distinct scenarios of it (comments repeat their wording and
    are deduplicated before any teacher call): such scenarios are dealt to several surfaces.
    Within one surface a scenario repeats only when `per_surface` exceeds the kinds times the
    distinct scenarios of a kind."""
    if per_surface <= 0 or per_surface >= len(scenarios):
        return [(su, sc) for sc in scenarios for su in surfaces]
    rng = random.Random(f"deal:{seed}")
    by_kind: dict[str, list[Scenario]] = {}
    for sc in scenarios:
        by_kind.setdefault(sc.kind, []).append(sc)
    kinds = sorted(by_kind)
    for kind in kinds:
        rng.shuffle(by_kind[kind])
    rng.shuffle(kinds)
    k = len(kinds)

    def nth(p: int) -> Scenario:
        group = by_kind[kinds[p % k]]
        return group[(p // k) % len(group)]

    return [(su, nth(j * per_surface + i)) for j, su in enumerate(surfaces)
            for i in range(per_surface)]


def play_all(surfaces: Sequence[Surface], scenarios: Sequence[Scenario], catalog: Catalog,
             teacher: Teacher, *, samples: int = 1, per_surface: int = 0, seed: int = 0,
             progress: Progress | None = None) -> list[Rollout]:
    """Every (surface, scenario) pair of `deal` x sample."""
    jobs = [(su, sc, k) for su, sc in deal(surfaces, scenarios, per_surface, seed)
            for k in range(samples)]
    total, step = len(jobs), max(1, len(jobs) // 100)
    out: list[Rollout] = []
    if teacher.concurrency > 1:
        with ThreadPoolExecutor(max_workers=teacher.concurrency) as pool:
            results = pool.map(lambda j: play(j[0], j[1], catalog, teacher, j[2]), jobs)
            for r in results:
                out.append(r)
                _tick(progress, len(out), total, step)
    else:
        for su, sc, k in jobs:
            out.append(play(su, sc, catalog, teacher, k))
            _tick(progress, len(out), total, step)
    return out


def _tick(progress: Progress | None, done: int, total: int, step: int) -> None:
    if progress is not None and (done % step == 0 or done == total):
        progress("rollout", done, total)


def trajectory_of(rollout: Rollout, teacher_name: str,
                  scenario_dict: Mapping | None = None) -> Trajectory:
    """The kept rollout as a `Trajectory` (needs `rollout.episode`); pass `scenario_dict`
    (`Scenario.to_dict()`) when converting many rollouts of one scenario."""
    ep, sc, su, scores = rollout.episode, rollout.scenario, rollout.surface, rollout.scores
    if ep is None or scores is None:
        raise ValueError(f"rollout of {sc.id} was not played: {rollout.error}")
    return Trajectory(
        messages=ep.messages, tools=tuple(render_tools(su.harness)),
        harness_hash=ep.harness_hash, scenario_id=sc.id, kind=sc.kind,
        skill=sc.turns[0].skill, product_id=sc.product_id, variant_id=su.variant_id,
        pool=su.pool, source="teacher", teacher=teacher_name, accuracy=scores.accuracy,
        effectiveness=scores.effectiveness, rewards=scores.rewards(), retries=ep.retries,
        scenario=scenario_dict if scenario_dict is not None else sc.to_dict())
