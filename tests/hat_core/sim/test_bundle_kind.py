"""The `bundle` scenario kind: only for a harness with `bundle.offers`, solvable by the oracle,
and invisible to every harness without it (v1's catalog and banks are what they always were)."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from hat_core.evaluation.cases import eval_world, harness_world
from hat_core.harness.io import load_harness
from hat_core.sim.batch import play, world
from hat_core.sim.bundles import bundle_offers
from hat_core.sim.catalog import generate_catalog
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy
from hat_core.sim.scenarios import (
    KINDS,
    extra_counts,
    generate_scenarios,
    kinds_for,
    make_scenario,
    new_kinds,
)
from hat_core.sim.tools import execute

# sha256 of (catalog repr + scenario dicts) as main built them before the bundle kind existed
MAIN_WORLD_7_45 = "105167564be3dbf89c68a8dbba40c01a9472fa7015b29e683d5ab861d57195fc"
MAIN_EVAL_WORLD_0_30 = "0d40374337dd7d08096d0034b29cbd56c1379563a6c283007c4be89baffbb38b"


def _digest(built) -> str:
    catalog, scenarios = built
    text = repr(catalog) + json.dumps([s.to_dict() for s in scenarios], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def harnesses(examples_dir):
    return {v: load_harness(examples_dir / f"{v}.yaml") for v in ("v1", "v2", "v3", "v4")}


def test_kinds_follow_the_harness_tools(harnesses):
    assert kinds_for(harnesses["v1"]) == kinds_for(harnesses["v2"]) == KINDS
    assert kinds_for(harnesses["v3"]) == (*KINDS, "bundle")
    assert new_kinds(harnesses["v3"], harnesses["v2"]) == ("bundle",)
    assert new_kinds(harnesses["v4"], harnesses["v3"]) == ()
    assert new_kinds(harnesses["v3"], None) == ()


def test_v1_worlds_are_byte_identical_to_main(harnesses):
    assert _digest(world(7, 45)) == MAIN_WORLD_7_45
    assert _digest(eval_world(0, 30)) == MAIN_EVAL_WORLD_0_30
    v1_extra = extra_counts(kinds_for(harnesses["v1"]), 45)
    assert v1_extra == {}
    assert world(7, 45, extra=v1_extra) == world(7, 45)
    assert harness_world(harnesses["v2"], 0, 30) == eval_world(0, 30)
    assert all(s.kind != "bundle" for s in harness_world(harnesses["v1"], 0, 30)[1])


def test_v3_bank_keeps_the_base_bank_and_adds_one_stratum(harnesses):
    _, base = eval_world(0, 30)
    _, bank = harness_world(harnesses["v3"], 0, 30)
    assert bank[:30] == base
    assert [s.id for s in bank[30:]] == ["s00030-bundle", "s00031-bundle"]


def test_extra_counts_boost_new_kinds_to_a_share():
    assert extra_counts((*KINDS, "bundle"), 60) == {"bundle": 4}
    assert extra_counts((*KINDS, "bundle"), 60, boost=("bundle",), share=0.25) == {"bundle": 20}
    with pytest.raises(ValueError, match="share"):
        extra_counts(KINDS, 60, share=1.0)


def test_bundle_offers_are_seeded_by_the_product_not_the_stream():
    catalog = generate_catalog(random.Random(3))
    p = catalog.products[0]
    offers = bundle_offers(catalog, p)
    assert offers == bundle_offers(catalog, p) and 1 <= len(offers) <= 2
    assert all(o.partner_id != p.id and o.saving > 0 for o in offers)
    assert list(offers) == sorted(offers, key=lambda o: -o.saving)
    lone = generate_catalog(random.Random(3), size=1)
    assert bundle_offers(lone, lone.products[0]) == ()


def test_tool_returns_the_offers_and_fails_as_a_value():
    catalog = generate_catalog(random.Random(3))
    p = catalog.products[2]
    result = execute(catalog, "bundle.offers", {"product_id": p.id})
    assert result.ok and result.content["offers"][0]["bundle_price"] == \
        bundle_offers(catalog, p)[0].bundle_price
    assert execute(catalog, "bundle.offers", {"product_id": "P9"}).error_type == "not_found"


def test_scenario_truth_asks_for_the_call_and_the_facts():
    catalog = generate_catalog(random.Random(4))
    s = make_scenario(catalog, random.Random(1), "bundle", 7)
    turn = s.turns[0]
    offer = bundle_offers(catalog, catalog.product(s.product_id))[0]
    assert s.id == "s00007-bundle" and turn.skill == "bundle_deals"
    assert turn.required[0].tool_id == "bundle.offers"
    assert turn.required[0].args == {"product_id": s.product_id}
    assert {f.label for f in turn.facts} == {"partner", "bundle_price"}
    assert offer.partner_title in turn.facts[0].alternatives
    assert any("\u4e00" <= ch <= "\u9fff" for ch in turn.user)


def test_oracle_solves_bundle_cases_and_a_v2_memoriser_fails_them(harnesses):
    rng = random.Random(5)
    catalog = generate_catalog(rng)
    bank = generate_scenarios(catalog, rng, 0, {"bundle": 6})
    for h in (harnesses["v3"], harnesses["v4"]):
        results = [play(h, s, catalog, OraclePolicy()) for s in bank]
        assert all(r.verdict.passed for r in results), [r.verdict for r in results]
    stale = [play(harnesses["v3"], s, catalog, MemorisingPolicy(harnesses["v2"])) for s in bank]
    assert not any(r.verdict.passed for r in stale)
    assert {r.verdict.failure for r in stale} == {"wrong_tool"}
