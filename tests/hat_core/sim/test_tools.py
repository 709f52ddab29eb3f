"""Tools, binding and their typed failures: a bad call is a value, never a crash."""

from __future__ import annotations

import json

from harness_variants import RENAME_MAP, edit

from hat_core.harness.io import load_harness
from hat_core.sim.batch import world
from hat_core.sim.binding import bind
from hat_core.sim.episode import AssistantTurn, ToolCall
from hat_core.sim.policy import ScriptedPolicy
from hat_core.sim.runner import run_episode
from hat_core.sim.tools import TOOLS, execute


def _catalog():
    return world(11, 1)[0]


def _tool_messages(episode) -> list[dict]:
    return [json.loads(m["content"]) for m in episode.messages if m["role"] == "tool"]


def _no_hooks(data: dict) -> None:
    data["hooks"] = []


def _play(harness, *calls: ToolCall):
    catalog, scenarios = world(11, 1)
    steps = [AssistantTurn(tool_calls=(c,)) for c in calls] + [AssistantTurn(content="好的")]
    return run_episode(harness, scenarios[0], catalog, ScriptedPolicy(steps))


def test_execute_returns_typed_failures():
    cat = _catalog()
    assert execute(cat, "product.price", {"product_id": "P0"}).error_type == "not_found"
    assert execute(cat, "product.price", {}).error_type == "bad_arguments"
    assert execute(cat, "product.price", {"product_id": 7}).error_type == "bad_arguments"
    assert execute(cat, "gift.wrap", {}).error_type == "not_implemented"
    assert execute(cat, "shipping.estimate",
                   {"product_id": "P1001", "city": "火星"}).error_type == "not_found"


def test_price_calc_uses_the_best_usable_coupon():
    cat = _catalog()
    p = cat.products[0]
    result = execute(cat, "price.calc", {"product_id": p.id, "quantity": 3,
                                         "coupon_ids": [c.id for c in p.coupons]})
    total = round(p.promo_price * 3, 2)
    usable = [c.amount for c in p.coupons if c.threshold <= total]
    assert result.ok
    assert result.content["final"] == round(total - max(usable, default=0), 2)


def test_coupon_string_is_accepted_as_a_list():
    cat = _catalog()
    p = cat.products[0]
    as_list = execute(cat, "price.calc", {"product_id": p.id, "coupon_ids": [p.coupons[0].id]})
    as_text = execute(cat, "price.calc", {"product_id": p.id, "coupon_ids": p.coupons[0].id})
    assert as_list == as_text


def test_unknown_tool_gives_a_typed_error(v1):
    ep = _play(v1, ToolCall("c1", "get_weather", "{}"))
    assert _tool_messages(ep)[0]["error"] == "unknown_tool"
    call = ep.turns[0].calls[0]
    assert (call.tool_id, call.ok, call.error_type) == (None, False, "unknown_tool")


def test_bad_arguments_give_a_typed_error_without_the_hook(v1):
    harness = edit(v1, _no_hooks)
    ep = _play(harness, ToolCall("c1", "get_price", '{"product_id": 1001}'),
               ToolCall("c2", "get_price", "{not json"))
    assert [m["error"] for m in _tool_messages(ep)] == ["bad_arguments", "bad_arguments"]
    assert not ep.hook_firings


def test_a_tool_without_implementation_is_not_implemented(v1):
    def add_tool(data: dict) -> None:
        data["tools"].append({"id": "gift.wrap", "name": "get_bundles",
                              "description": "礼品包装", "parameters": {
                                  "type": "object", "properties": {}, "required": []}})
    ep = _play(edit(v1, add_tool), ToolCall("c1", "get_bundles", "{}"))
    assert _tool_messages(ep)[0]["error"] == "not_implemented"


def test_each_tool_reference_is_the_v1_surface_of_its_canonical_parameters(v1, examples_dir):
    v3 = load_harness(examples_dir / "v3.yaml")  # bundle.offers came with v3
    assert [t.id for t in v1.tools] == [t for t in TOOLS if t != "bundle.offers"]
    for tool in (*v1.tools, v3.tool("bundle.offers")):
        spec = TOOLS[tool.id]
        assert spec.reference == tool.parameters
        props = spec.reference["properties"]
        assert list(props) == [p.name for p in spec.params]
        assert [props[p.name]["type"] for p in spec.params] == [p.type for p in spec.params]


def test_binding_by_name_and_by_rename_map(v1, renamed):
    assert bind(v1).tools_by_id["product.price"].to_surface == {"product_id": "product_id"}
    b = bind(renamed, RENAME_MAP)
    assert b.tools_by_id["product.price"].name == "shop_fetch_price"
    assert b.tools_by_id["product.price"].to_surface == {"product_id": "item_id"}
    assert b.tools_by_id["stock.check"].to_surface == {"product_id": "goods_code",
                                                       "sku": "spec"}


def test_binding_without_a_rename_map_pairs_by_evidence(renamed):
    b = bind(renamed)  # no rename map
    assert b.tools_by_id["product.price"].to_surface == {"product_id": "item_id"}
    # two renamed string parameters: told apart by description and required-ness
    assert b.tools_by_id["stock.check"].to_surface == {"product_id": "goods_code",
                                                       "sku": "spec"}
    assert b.refused_hints == {}


def test_binding_tells_two_strings_apart_by_required_ness_without_descriptions(renamed):
    def plain(data: dict) -> None:
        stock = next(t for t in data["tools"] if t["id"] == "stock.check")
        props = stock["parameters"]["properties"]
        stock["parameters"]["properties"] = {"spec": {"type": "string"},
                                             "goods_code": {"type": "string"}}
        assert set(props) == {"goods_code", "spec"}
    tb = bind(edit(renamed, plain)).tools_by_id["stock.check"]
    assert tb.to_surface == {"product_id": "goods_code", "sku": "spec"}


def test_binding_maps_a_coupon_string_parameter(v1):
    def one_coupon(data: dict) -> None:
        calc = next(t for t in data["tools"] if t["id"] == "price.calc")
        props = calc["parameters"]["properties"]
        del props["coupon_ids"]
        props["coupon_code"] = {"type": "string"}
        props["channel"] = {"type": "string", "enum": ["live", "shop"]}
        calc["parameters"]["required"] = ["product_id", "quantity", "channel"]
    tb = bind(edit(v1, one_coupon)).tools_by_id["price.calc"]
    assert tb.to_surface["coupon_ids"] == "coupon_code"
    assert tb.fillers == {"channel": "live"}


def test_binding_is_cached_per_harness_content(v1):
    assert bind(v1) is bind(v1)
    assert bind(v1) is not bind(v1, {"product.price": {"pid": "product_id"}})
