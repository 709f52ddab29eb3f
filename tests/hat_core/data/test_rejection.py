"""Rejection sampling keeps exactly the trajectories over the thresholds; best-of-n."""

from __future__ import annotations

import pytest
from data_helpers import ScriptedLLMTeacher, record_script, tiny_config

from hat_core.data.config import RejectionConfig
from hat_core.data.rejection import dedupe, select
from hat_core.data.rollout import (
    Rollout,
    play_all,
    training_surfaces,
    trajectory_of,
    unique_scenarios,
)
from hat_core.sim.batch import world

MODES = ("no_fact", "no_cta", "cannot", None)


@pytest.fixture(scope="module")
def rollouts(harness) -> list[Rollout]:
    """Oracle-quality answers for some scenarios, damaged replies for the others."""
    catalog, scenarios = world(11, 45)
    scenarios, _ = unique_scenarios(scenarios)
    damage = {sc.id: MODES[i % 4] for i, sc in enumerate(scenarios) if MODES[i % 4]}
    teacher = ScriptedLLMTeacher(record_script(harness, scenarios, catalog, damage))
    surfaces = training_surfaces(harness, tiny_config(variants=0))
    return play_all(surfaces, scenarios, catalog, teacher)


@pytest.mark.parametrize("acc, eff", [(1.0, 0.75), (1.0, 1.0), (0.5, 0.5), (0.75, 0.0),
                                      (0.0, 0.0)])
def test_rejection_keeps_exactly_the_trajectories_over_the_thresholds(rollouts, acc, eff):
    kept, rejected = select(rollouts, RejectionConfig(min_accuracy=acc, min_effectiveness=eff))
    expected = {r.scenario.id for r in rollouts
                if r.scores.accuracy >= acc and r.scores.effectiveness >= eff}
    assert {r.scenario.id for r in kept} == expected
    assert rejected["total"] == len(rollouts) - len(kept)
    assert rejected["accuracy"] == sum(r.scores.accuracy < acc for r in rollouts)
    assert rejected["effectiveness"] == sum(r.scores.effectiveness < eff for r in rollouts)


def test_the_damaged_replies_span_the_thresholds(rollouts):
    accuracies = {r.scores.accuracy for r in rollouts}
    effectiveness = {r.scores.effectiveness for r in rollouts}
    assert {0.5, 1.0} <= accuracies and {0.75, 1.0} <= effectiveness
    kept, _ = select(rollouts, RejectionConfig())
    assert 0 < len(kept) < len(rollouts)


def test_best_of_n_keeps_the_best_sample_of_each_group(harness):
    catalog, scenarios = world(11, 15)
    surfaces = training_surfaces(harness, tiny_config(variants=0))
    good = ScriptedLLMTeacher(record_script(harness, scenarios, catalog, {}))
    bad = ScriptedLLMTeacher(record_script(harness, scenarios, catalog,
                                           {sc.id: "no_cta" for sc in scenarios}))
    first = play_all(surfaces, scenarios, catalog, bad)
    second = play_all(surfaces, scenarios, catalog, good)
    samples = [r.__class__(**{**r.__dict__, "sample": 1}) for r in second]
    kept, rejected = select(first + samples, RejectionConfig(min_accuracy=0.0,
                                                             min_effectiveness=0.0))
    assert len(kept) == len(scenarios)
    assert all(r.sample == 1 for r in kept if r.scenario.turns[0].cta)
    assert rejected["best_of_n"] == len(scenarios)


def test_dedupe_drops_exact_duplicates(rollouts):
    kept, _ = select(rollouts, RejectionConfig(min_accuracy=0, min_effectiveness=0))
    trajectories = [trajectory_of(r, "fake") for r in kept]
    unique, dropped = dedupe(trajectories + trajectories[:5])
    assert dropped == 5 and unique == trajectories
