"""Splits by scenario and product: held-out products, scenarios and variants never in train."""

from __future__ import annotations

import json

from datasets import load_from_disk

from hat_core.data.config import SplitConfig
from hat_core.data.splits import assign_splits, choose_heldout, scenario_products
from hat_core.data.trajectory import Trajectory, products_in
from hat_core.data.trl_rows import trajectory_from_row
from hat_core.harness.io import load_harness
from hat_core.hsa.heldout import uses_heldout
from hat_core.hsa.variant import RenameMap, Variant


def _trajectories(built) -> list[Trajectory]:
    data = load_from_disk(str(built.out / "dataset"))
    return [trajectory_from_row(r) for s in data for r in data[s]]


def test_heldout_products_and_scenarios_appear_only_in_test(built):
    heldout = json.loads((built.out / "heldout.json").read_text())
    assert heldout["products"] and heldout["scenarios"]
    for t in _trajectories(built):
        if t.split != "test":
            assert not products_in(t.text()) & set(heldout["products"])
            assert t.product_id not in heldout["products"]
            assert t.scenario_id not in heldout["scenarios"]


def test_every_scenario_lives_in_one_split(built):
    splits: dict[str, set[str]] = {}
    for t in _trajectories(built):
        splits.setdefault(t.scenario_id, set()).add(t.split)
    assert all(len(s) == 1 for s in splits.values())
    assert {next(iter(s)) for s in splits.values()} == {"train", "validation", "test"}


def test_a_search_hit_on_a_heldout_product_sends_the_scenario_to_test(built):
    trajectories = _trajectories(built)
    mentioned = scenario_products(trajectories)
    search = next(sid for sid, prods in mentioned.items() if "search" in sid and prods)
    heldout = choose_heldout([], [], SplitConfig(heldout_products=0, heldout_scenarios=0), 0)
    heldout = heldout.__class__(products=frozenset(list(mentioned[search])[:1]))
    cfg = SplitConfig(validation=0.0)
    out = assign_splits([t for t in trajectories if t.scenario_id == search], heldout, cfg, 0)
    assert {t.split for t in out} == {"test"}


def test_heldout_variants_are_written_with_rename_maps_and_never_trained_on(built):
    folder = built.out / "heldout_variants"
    index = built.manifest["heldout_variants"]
    assert len(index) == 1
    harness = load_harness(folder / index[0]["file"])
    meta = json.loads((folder / index[0]["rename_map"]).read_text())
    assert meta["pool"] == "heldout"
    variant = Variant(harness, RenameMap.from_dict({k: meta[k] for k in
                                                    ("tools", "skills", "params", "terms")}),
                      tuple(meta["transforms"]), meta["seed"], meta["pool"],
                      tuple(meta["distractors"]))
    assert uses_heldout(variant)
    trained = {t.harness_hash for t in _trajectories(built)}
    assert harness.content_hash() not in trained


def test_choose_heldout_is_seeded():
    ids = [f"P{1000 + i}" for i in range(40)]
    cfg = SplitConfig(heldout_products=0.1)
    assert choose_heldout(ids, [], cfg, 3) == choose_heldout(ids, [], cfg, 3)
    assert len(choose_heldout(ids, [], cfg, 3).products) == 4
