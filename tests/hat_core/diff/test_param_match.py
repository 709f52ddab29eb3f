"""The one parameter matcher: the diff and the simulator's binding pair renamed parameters
alike, by combined evidence, and check rename hints instead of trusting them."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import hat_core.sim.binding as binding
from hat_core.diff.api import diff_harness
from hat_core.diff.param_match import (
    Param,
    description_similarity,
    match_params,
    pair_params,
    schema_params,
)
from hat_core.harness.io import harness_from_data, load_harness
from hat_core.harness.model import Harness, Tool
from hat_core.sim.binding import bind, bind_tool

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "harnesses"


@pytest.fixture(scope="module")
def v1() -> Harness:
    return load_harness(EXAMPLES / "v1.yaml")


def renamed_tool(v1: Harness, tool_id: str, renames: dict[str, str],
                 reverse: bool = True, describe: bool = True) -> Tool:
    """`tool_id` with parameters renamed (opaque names), optionally in reverse order and with
    descriptions wrapped in an HSA-like template."""
    data = copy.deepcopy(v1.tool(tool_id).model_dump(mode="json"))
    params = data["parameters"]
    names = list(params["properties"])
    order = reversed(names) if reverse else names
    params["properties"] = {renames.get(n, n): _wrapped(params["properties"][n], describe)
                            for n in order}
    params["required"] = [renames.get(n, n) for n in params["required"]]
    return Tool.model_validate(data)


def _wrapped(schema: dict, describe: bool) -> dict:
    out = dict(schema)
    if describe:
        out["description"] = f"参数：{schema['description']}"
    else:
        out.pop("description", None)
    return out


def harness_with(v1: Harness, tool: Tool) -> Harness:
    data = v1.model_dump(mode="json")
    data["tools"] = [tool.model_dump(mode="json") if t["id"] == tool.id else t
                     for t in data["tools"]]
    return harness_from_data(data)


# --- two renamed parameters of one type ---------------------------------------------------------

SHIPPING = {"product_id": "ylezrh", "city": "destination"}


def test_the_diff_pairs_two_renamed_strings_by_description(v1):
    after = renamed_tool(v1, "shipping.estimate", SHIPPING)
    m = match_params(v1.tool("shipping.estimate"), after)
    assert {p.before.name: p.after.name for p in m.pairs} == SHIPPING
    assert not m.removed and not m.added


def test_the_binding_pairs_them_with_the_same_function(v1, monkeypatch):
    calls = []

    def spy(before, after, hints=None):
        calls.append((tuple(p.name for p in before), tuple(p.name for p in after)))
        return pair_params(before, after, hints)

    monkeypatch.setattr(binding, "pair_params", spy)
    tb = bind_tool(renamed_tool(v1, "shipping.estimate", SHIPPING), {})
    assert tb.to_surface == SHIPPING
    assert calls == [(("product_id", "city"), ("destination", "ylezrh"))]


def test_diff_and_binding_agree_on_every_renamed_tool(v1):
    for tool in v1.tools:
        names = tool.param_names
        if len(names) < 2:
            continue
        renames = {n: f"p{k}x" for k, n in enumerate(names)}
        after = renamed_tool(v1, tool.id, renames)
        diff_pairs = {p.before.name: p.after.name
                      for p in match_params(tool, after).pairs}
        assert diff_pairs == renames
        assert dict(bind_tool(after, {}).to_surface) == renames


def test_without_descriptions_required_ness_and_constraints_decide(v1):
    renames = {"product_id": "a1x", "quantity": "b2x", "coupon_ids": "c3x"}
    after = renamed_tool(v1, "price.calc", renames, describe=False)
    assert {p.before.name: p.after.name for p in match_params(v1.tool("price.calc"), after)
            .pairs} == renames
    renames = {"reason": "why", "order_id": "ref"}
    after = renamed_tool(v1, "handoff.human", renames, describe=False)
    assert dict(bind_tool(after, {}).to_surface) == renames


def test_the_diff_reports_the_renames_not_a_swap(v1):
    after = harness_with(v1, renamed_tool(v1, "handoff.human",
                                          {"reason": "cause", "order_id": "ticket_ref"}))
    summaries = [c.summary for c in diff_harness(v1, after).changes]
    assert "tool handoff.human parameter reason renamed: reason -> cause" in summaries
    assert ("tool handoff.human parameter order_id renamed: order_id -> ticket_ref"
            in summaries)
    assert all("type changed" not in s and "required changed" not in s for s in summaries)


# --- hints ---------------------------------------------------------------------------------------

def test_a_right_hint_is_taken(v1):
    after = renamed_tool(v1, "stock.check", {"product_id": "goods", "sku": "spec"})
    tb = bind_tool(after, {"goods": "product_id", "spec": "sku"})
    assert tb.to_surface == {"product_id": "goods", "sku": "spec"} and tb.refused == ()


def test_a_hint_with_a_type_the_canonical_parameter_does_not_accept_is_refused(v1):
    after = renamed_tool(v1, "size.recommend",
                         {"product_id": "pid", "height_cm": "tall", "weight_kg": "heavy"})
    tb = bind_tool(after, {"pid": "height_cm", "tall": "height_cm"})
    assert [r.message for r in tb.refused] == [
        "hint pid -> height_cm refused: type string of 'pid' is not one 'height_cm' accepts "
        "(number)"]
    assert tb.to_surface == {"product_id": "pid", "height_cm": "tall", "weight_kg": "heavy"}


def test_a_swapped_hint_is_refused_by_the_evidence(v1):
    after = renamed_tool(v1, "shipping.estimate", SHIPPING)
    tb = bind_tool(after, {"ylezrh": "city", "destination": "product_id"})
    assert [(r.after, r.before) for r in tb.refused] == [("ylezrh", "city"),
                                                        ("destination", "product_id")]
    assert "the evidence pairs it with" in tb.refused[0].reason
    assert tb.to_surface == SHIPPING


def test_missing_and_already_bound_hints_are_refused(v1):
    b = bind(v1, {"product.price": {"pid": "product_id"},
                  "handoff.human": {"reason": "order_id"}})
    assert {t: [r.reason for r in rs] for t, rs in b.refused_hints.items()} == {
        "product.price": ["no parameter 'pid'"],
        "handoff.human": ["'reason' is already paired"]}
    assert b.tools_by_id["handoff.human"].to_surface == {"reason": "reason",
                                                         "order_id": "order_id"}


def test_a_hint_decides_where_the_evidence_cannot(v1):
    renames = {"product_id": "a1x", "city": "b2x"}
    after = renamed_tool(v1, "shipping.estimate", renames, reverse=False, describe=False)
    assert dict(bind_tool(after, {}).to_surface) == renames  # position: a guess
    swapped = {"product_id": "b2x", "city": "a1x"}
    tb = bind_tool(after, {"b2x": "product_id", "a1x": "city"})
    assert tb.refused == () and dict(tb.to_surface) == swapped


def test_an_unimplemented_tool_takes_no_hints(v1):
    # a tool the simulator does not implement (bundle.offers is implemented since v3's skill)
    tool = Tool.model_validate({"id": "gift.wrap", "name": "get_gift_wrap",
                                "description": "礼品包装", "parameters": {
                                    "type": "object", "required": ["sku_code"],
                                    "properties": {"sku_code": {"type": "string"}}}})
    tb = bind_tool(tool, {"sku_code": "product_id"})
    assert tb.to_surface == {} and tb.refused == () and not tb.implemented
    assert tb.fillers == {"sku_code": ""}


# --- the evidence ---------------------------------------------------------------------------------

def test_description_similarity_survives_a_template():
    assert description_similarity("商品编号", "参数：商品编号") > 0.8
    assert description_similarity("Param: 订单号", "订单号") > 0.7
    assert description_similarity("转人工原因", "紧急程度") == 0.0
    assert description_similarity("", "订单号") is None


def test_a_type_the_other_side_accepts_is_weaker_than_the_same_type():
    ref = schema_params({"properties": {"coupon_ids": {"type": "array",
                                                       "items": {"type": "string"}}}},
                        {"coupon_ids": ("array", "string")})
    after = [Param("channel", {"type": "string", "enum": ["live", "shop"]}, True),
             Param("coupon_code", {"type": "string"}, False)]
    m = pair_params(ref, after)
    assert [(p.before.name, p.after.name) for p in m.pairs] == [("coupon_ids", "coupon_code")]
    assert [p.name for p in m.added] == ["channel"]
