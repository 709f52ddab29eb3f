"""The oracle under harnesses it gets as files alone: HSA variants with no rename map (bound by
the parameter matcher's evidence) and the example weeks v1..v4.

The variants are those `hat augment v1.yaml --variants 8 --seed S` writes for S = 0..5, dumped
with `dump_harness` and reloaded with `load_harness`. Every week's tool is implemented
(v3/v4's `bundle.offers` too, with the `bundle` kind: tests/hat_core/sim/test_bundle_kind.py);
the base bank never calls it, and every scenario of the bank still passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hat_core.harness.io import dump_harness, load_harness
from hat_core.harness.model import Harness
from hat_core.hsa.augment import augment_many
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.variant import Variant
from hat_core.sim.batch import simulate
from hat_core.sim.binding import bind
from hat_core.sim.policy import OraclePolicy

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "harnesses"
SEEDS, PER_SEED = range(6), 8
EPISODES = 30  # every scenario kind twice


def _failing(results) -> list[str]:
    return [f"{r.scenario.id} ({r.scenario.kind}): {r.verdict.failure} {r.verdict.reason}"
            for r in results if not r.verdict.passed]


@pytest.fixture(scope="module")
def variant_files(tmp_path_factory) -> list[tuple[str, Harness, Variant]]:
    """(where, the harness reloaded from its file, the variant augment made) x 48."""
    v1 = load_harness(EXAMPLES / "v1.yaml")
    out = []
    for seed in SEEDS:
        folder = tmp_path_factory.mktemp(f"seed{seed}")
        for i, variant in enumerate(augment_many(v1, PER_SEED, seed, HsaConfig())):
            path = folder / f"variant_{i:03d}.yaml"
            path.write_text(dump_harness(variant.harness), encoding="utf-8")
            out.append((f"seed {seed} variant {i}", load_harness(path), variant))
    return out


def test_the_oracle_solves_every_variant_from_its_file_alone(variant_files):
    failing = {}
    for where, harness, _ in variant_files:
        results = simulate(harness, OraclePolicy(), episodes=EPISODES, seed=0)
        if _failing(results):
            failing[where] = _failing(results)[:3]
    assert len(variant_files) == 48
    assert failing == {}


def test_the_evidence_binds_each_variant_as_its_rename_map_says(variant_files):
    """Without the map the binding is the map's, and the map's hints are all taken; some
    variants rename two parameters of one type in a tool (where binding by type fails)."""
    two_of_a_type = 0
    for where, harness, variant in variant_files:
        b = bind(harness)
        hinted = bind(harness, variant.rename_map.binding_map())
        assert hinted.refused_hints == {}, where  # a right map is never refused
        assert {t: tb.to_surface for t, tb in hinted.tools_by_id.items()} == {
            t: tb.to_surface for t, tb in b.tools_by_id.items()}, where
        for tool_id, renames in variant.rename_map.params.items():  # v1's names: canonical
            surface = b.tools_by_id[tool_id].to_surface
            assert {old: surface.get(old) for old in renames} == renames, (where, tool_id)
        two_of_a_type += any(_same_type_renamed(variant.harness.tool(t), r)
                             for t, r in variant.rename_map.params.items())
    assert two_of_a_type >= 10


def _same_type_renamed(tool, renames: dict[str, str]) -> bool:
    props = tool.parameters["properties"]
    types = [props[new].get("type") for new in renames.values()]
    return len(types) != len(set(types))


@pytest.mark.parametrize("version", ["v1", "v2", "v3", "v4"])
def test_the_oracle_solves_every_example_week(version):
    harness = load_harness(EXAMPLES / f"{version}.yaml")
    results = simulate(harness, OraclePolicy(), episodes=60, seed=0)
    assert _failing(results) == []
    binding = bind(harness)
    assert binding.refused_hints == {}
    unimplemented = [t for t in binding.tools_by_id.values() if not t.implemented]
    assert unimplemented == []
    called = {c["function"]["name"] for r in results for m in r.episode.messages
              for c in m.get("tool_calls") or ()}
    assert not called & {t.name for t in unimplemented}


def test_the_example_weeks_bind_their_renamed_and_changed_parameters():
    v2, v4 = (bind(load_harness(EXAMPLES / f"{v}.yaml")) for v in ("v2", "v4"))
    assert v2.tools_by_id["size.recommend"].to_surface["weight_kg"] == "weight"
    assert v2.tools_by_id["stock.check"].to_surface["sku"] == "variant"
    calc, ship = v4.tools_by_id["price.calc"], v4.tools_by_id["shipping.estimate"]
    assert calc.to_surface["coupon_ids"] == "coupon_code"  # array -> string, similar text
    assert dict(ship.to_surface) == {"product_id": "product_id", "city": "city"}
    assert ship.fillers == {"district": ""}  # a new required parameter: a filler
