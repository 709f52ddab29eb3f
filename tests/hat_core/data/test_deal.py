"""Dealing scenarios to surfaces: a large variant pool at the cost of the scenario bank."""

from __future__ import annotations

from collections import Counter

from data_helpers import tiny_config, v1

from hat_core.data.build import build
from hat_core.data.rollout import Surface, deal, unique_scenarios
from hat_core.sim.batch import world


def _surfaces(n: int) -> list[Surface]:
    return [Surface(f"v{i:03d}", "train", None, {}) for i in range(n)]


def _bank():
    _, scenarios = world(0, 300)
    return unique_scenarios(scenarios)[0]


def test_zero_plays_every_scenario_on_every_surface():
    bank = _bank()[:20]
    pairs = deal(_surfaces(3), bank, 0, seed=0)
    assert len(pairs) == 60 and len(set((su.variant_id, sc.id) for su, sc in pairs)) == 60


def test_each_surface_gets_its_share_of_distinct_scenarios_and_every_kind_an_equal_share():
    bank = _bank()
    kinds = {sc.kind for sc in bank}
    per = 6
    pairs = deal(_surfaces(300), bank, per, seed=0)
    assert len(pairs) == 300 * per
    by_surface: dict[str, list[str]] = {}
    for su, sc in pairs:
        by_surface.setdefault(su.variant_id, []).append(sc.id)
    assert all(len(ids) == len(set(ids)) == per for ids in by_surface.values())
    counts = Counter(sc.kind for _, sc in pairs)
    assert set(counts) == kinds
    assert max(counts.values()) - min(counts.values()) <= 1
    # rare kinds (few distinct comments) are dealt to several surfaces; others spread out
    assert len({sc.id for _, sc in pairs}) > len(bank) * 0.8


def test_the_deal_is_seeded():
    bank = _bank()
    ids = [(su.variant_id, sc.id) for su, sc in deal(_surfaces(40), bank, 5, seed=1)]
    assert ids == [(su.variant_id, sc.id) for su, sc in deal(_surfaces(40), bank, 5, seed=1)]
    assert ids != [(su.variant_id, sc.id) for su, sc in deal(_surfaces(40), bank, 5, seed=2)]


def test_a_build_with_scenarios_per_surface_plays_that_many_per_surface(tmp_path):
    config = tiny_config(scenarios=60, variants=12, scenarios_per_surface=4,
                         **{"validation.min_skill_share": 0.0})
    result = build(v1(), config, tmp_path / "ds")
    assert result.stats.rollouts == 13 * 4
    assert result.manifest["config"]["scenarios_per_surface"] == 4
