"""The catalog and the scenario bank: seeded, deterministic, covering every skill."""

from __future__ import annotations

import random

import pytest

from hat_core.sim.batch import world
from hat_core.sim.catalog import generate_catalog
from hat_core.sim.scenarios import KINDS, Scenario, generate_scenarios, make_scenario


def test_same_seed_same_catalog_and_scenarios():
    assert world(5, 40) == world(5, 40)


def test_other_seed_other_catalog():
    assert generate_catalog(random.Random(1)) != generate_catalog(random.Random(2))


def test_bank_is_prefix_stable():
    _, short = world(9, 10)
    _, long = world(9, 30)
    assert long[:10] == short


def test_catalog_size_is_a_parameter():
    assert len(generate_catalog(random.Random(0), size=7).products) == 7


def test_content_is_chinese():
    catalog, scenarios = world(0, 15)
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in p.title) for p in catalog.products)
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in s.turns[0].user) for s in scenarios)


def test_bank_covers_every_kind_and_every_v1_skill(v1):
    _, scenarios = world(3, len(KINDS))
    assert {s.kind for s in scenarios} == set(KINDS)
    skills = {t.skill for s in scenarios for t in s.turns}
    assert skills == {s.id for s in v1.skills}


def test_ground_truth_of_a_coupon_question():
    catalog, _ = world(0, 0)
    s = make_scenario(catalog, random.Random(4), "price_coupon")
    (turn,) = s.turns
    assert [c.tool_id for c in turn.required] == ["coupon.list", "price.calc"]
    product = catalog.product(s.product_id)
    calc = turn.required[1].args
    total = round(product.promo_price * calc["quantity"], 2)
    coupons = {c.id: c for c in product.coupons}
    saving = coupons[calc["coupon_ids"][0]].amount if "coupon_ids" in calc else 0
    assert float(turn.facts[0].alternatives[0]) == pytest.approx(total - saving)


def test_multi_turn_and_ambiguous_have_two_turns():
    catalog, _ = world(0, 0)
    multi = make_scenario(catalog, random.Random(1), "multi_turn")
    ambiguous = make_scenario(catalog, random.Random(1), "ambiguous")
    assert len(multi.turns) == 2 and len(ambiguous.turns) == 2
    assert ambiguous.turns[0].kind == "clarify" and not ambiguous.turns[0].required


def test_scenario_round_trips_through_a_dict():
    _, scenarios = world(2, len(KINDS))
    for s in scenarios:
        assert Scenario.from_dict(s.to_dict()) == s


def test_unknown_kind_lists_the_valid_ones():
    catalog, _ = world(0, 0)
    with pytest.raises(ValueError, match="valid: product_fact"):
        make_scenario(catalog, random.Random(0), "gossip")


def test_generate_scenarios_uses_only_the_given_rng():
    catalog = generate_catalog(random.Random(0))
    a = generate_scenarios(catalog, random.Random(8), 20)
    random.seed(123)  # the global generator must not matter
    b = generate_scenarios(catalog, random.Random(8), 20)
    assert a == b
