"""Renames: bijective, undone exactly by the inverse, and no old name left in the prompt."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from hsa_examples import HARNESSES, VERSIONS
from hypothesis import given, settings
from hypothesis import strategies as st

from hat_core.harness.io import harness_from_data
from hat_core.harness.model import Harness
from hat_core.harness.render import render
from hat_core.hsa.augment import augment
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.heldout import name_is_heldout
from hat_core.hsa.mentions import Replacer, tokens
from hat_core.hsa.names import lead_words, led_name, words
from hat_core.hsa.rename import apply_renames, rename
from hat_core.hsa.variant import RenameMap
from hat_core.hsa.vocab import TRAIN

RENAME_ONLY = HsaConfig().only("rename_tools", "rename_skills", "rename_params")
# v1 under RENAME_ONLY and seed 5, drawn by the generator before `shared_lead` existed
BEFORE_SHARED_LEAD = "502d22b460a120abce298001d5a20f3b3565564fd2be17643ff5d1b9f1d3932a"


def mentioning(h: Harness) -> Harness:
    """v1 with names mentioned in instructions, a tool description and a section body."""
    data = h.model_dump(mode="json")
    data["skills"][1]["instructions"] = (
        "用 get_price 查价，用calc_final_price算到手价；product_qa 除外。")
    data["tools"][5]["description"] += "（coupon_ids 来自 list_coupons）"
    data["prompt"]["sections"][4]["body"] += "\n参数 product_id 必填；先 get_product_info。"
    return harness_from_data(data)


def visible_tokens(h: Harness) -> set[str]:
    r = render(h)
    return tokens(r.system_prompt) | tokens(json.dumps(r.tools, ensure_ascii=False))


def test_mentions_follow_the_rename_and_the_inverse_restores_the_text(v1):
    h = mentioning(v1)
    cfg = replace(RENAME_ONLY, probabilities={**RENAME_ONLY.probabilities, "rename_element": 1})
    variant, rmap = rename(h, random.Random(1), TRAIN, cfg)
    new_get_price = rmap.tools["product.price"][1]
    assert f"用 {new_get_price} 查价" in variant.skill("price_coupon").instructions
    assert "product_id" in rmap.terms  # mentioned in text: one new name in every tool
    assert {m["product_id"] for m in rmap.params.values() if "product_id" in m} == {
        rmap.terms["product_id"]}
    old = {"get_price", "calc_final_price", "product_qa", "coupon_ids", "list_coupons",
           "product_id", "get_product_info"}
    assert not old & visible_tokens(variant)
    assert apply_renames(variant, rmap.inverse()).content_hash() == h.content_hash()


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), version=st.sampled_from(VERSIONS), mention=st.booleans())
def test_rename_only_variants_map_back_to_the_same_hash(seed, version, mention):
    original = mentioning(HARNESSES["v1"]) if mention else HARNESSES[version]
    v = augment(original, random.Random(seed), RENAME_ONLY)
    rm = v.rename_map
    assert rm.is_bijection()
    assert RenameMap.from_dict(json.loads(json.dumps(rm.to_dict()))) == rm
    assert rm.inverse().inverse() == rm
    assert apply_renames(v.harness, rm.inverse()).content_hash() == original.content_hash()
    renamed = {old for old, _ in [*rm.tools.values(), *rm.skills.values()]}
    assert not renamed & visible_tokens(v.harness)
    for tool_id, params in rm.params.items():
        tool = v.harness.tool(tool_id)
        assert not set(params) & set(tool.param_names)
        assert set(tool.parameters.get("required", [])) <= set(tool.param_names)


def test_required_follows_a_parameter_rename(v1):
    rmap = RenameMap(params={"size.recommend": {"height_cm": "stature"}})
    tool = apply_renames(v1, rmap).tool("size.recommend")
    assert tool.param_names == ["product_id", "stature", "weight_kg"]
    assert tool.parameters["required"] == ["product_id", "stature", "weight_kg"]


def test_a_map_that_does_not_fit_the_harness_is_refused(v1):
    with pytest.raises(ValueError, match="expects product.price to be called 'fetch'"):
        apply_renames(v1, RenameMap(tools={"product.price": ("fetch", "cost")}))
    with pytest.raises(ValueError, match="unknown parameters"):
        apply_renames(v1, RenameMap(params={"product.price": {"sku": "x"}}))


def test_is_bijection_catches_two_names_mapped_to_one():
    assert not RenameMap(tools={"a": ("x", "z"), "b": ("y", "z")}).is_bijection()
    assert not RenameMap(params={"t": {"a": "c", "b": "c"}}).is_bijection()
    assert not RenameMap(terms={"a": "c", "b": "c"}).is_bijection()
    assert RenameMap(tools={"a": ("x", "z"), "b": ("y", "w")}).is_bijection()


def test_replacer_respects_identifier_boundaries_and_placeholders():
    rep = Replacer({"get_price": "cost", "price": "tariff"})
    assert rep.sub("get_price, get_prices, {price}, price-x, 查price价") == (
        "cost, get_prices, {price}, price-x, 查tariff价")
    assert Replacer({}).sub("abc") == "abc"


def test_binding_map_composes_with_the_canonical_names_and_drops_unbound_ones():
    rm = RenameMap(params={"size.recommend": {"weight": "heft", "height_cm": "tall"},
                           "shipping.estimate": {"district": "area", "city": "town"},
                           "bundle.offers": {"product_id": "pid"}})
    canonical = {"size.recommend": {"weight": "weight_kg", "height_cm": "height_cm"},
                 "shipping.estimate": {"city": "city", "product_id": "product_id"},
                 "bundle.offers": {}}
    assert rm.binding_map(canonical) == {
        "size.recommend": {"heft": "weight_kg", "tall": "height_cm"},
        "shipping.estimate": {"town": "city"}}  # district binds nothing, bundle.offers no impl
    assert rm.binding_map()["shipping.estimate"] == {"area": "district", "town": "city"}


def _with(cfg: HsaConfig, **probabilities: float) -> HsaConfig:
    return replace(cfg, probabilities={**cfg.probabilities, **probabilities})


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), version=st.sampled_from(VERSIONS), mention=st.booleans())
def test_a_shared_lead_starts_every_renamed_tool_and_still_maps_back(seed, version, mention):
    """With `shared_lead` 1 every renamed tool starts with one word; names stay fresh, unique
    and valid, and the inverse map restores the harness."""
    original = mentioning(HARNESSES["v1"]) if mention else HARNESSES[version]
    cfg = _with(RENAME_ONLY, shared_lead=1.0, rename_element=0.9)
    variant, rmap = rename(original, random.Random(seed), TRAIN, cfg)
    new_names = [new for _, new in rmap.tools.values()]
    if len(new_names) >= 2:
        assert len({words(n)[0] for n in new_names}) == 1, new_names
        assert len(set(new_names)) == len(new_names)
    assert len({t.name for t in variant.tools}) == len(variant.tools)
    assert all(not name_is_heldout(n) for n in new_names)
    assert apply_renames(variant, rmap.inverse()).content_hash() == original.content_hash()


def test_a_shared_lead_is_off_by_default_and_leaves_the_variants_unchanged(v1):
    """Off (the default), the lead draws nothing from the seed: a variant is the one the
    generator drew before the option existed (its hash, taken then), so earlier data builds
    stay reproducible. On, the same seed gives other tool names."""
    assert HsaConfig().p("shared_lead") == 0.0
    plain = augment(v1, random.Random(5), RENAME_ONLY)
    assert plain.harness.content_hash() == BEFORE_SHARED_LEAD
    led = augment(v1, random.Random(5), _with(RENAME_ONLY, shared_lead=1.0))
    assert [t.name for t in led.harness.tools] != [t.name for t in plain.harness.tools]


def test_lead_words_come_from_the_names_their_synonyms_and_the_pool_prefixes(v1):
    leads = lead_words([t.name for t in v1.tools], TRAIN)
    assert {"get", "query", "fetch", "tool"} <= set(leads)
    assert leads == sorted(leads)
    assert not set(leads) & TRAIN.avoid
    name = led_name("get_price", "query", random.Random(0), TRAIN, HsaConfig().odds(),
                    {"query_order"})
    assert words(name)[0] == "query" and name not in {"get_price", "query_order"}
