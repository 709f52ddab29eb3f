"""The semantic harness diff (`hat_core.diff.api`): the example weeks, matching, every change
kind."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from hat_core.diff.api import Change, HarnessDiff, diff_harness, format_diff
from hat_core.harness.io import harness_from_data, load_harness
from hat_core.harness.model import Harness

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "harnesses"


def example(version: str) -> Harness:
    return load_harness(EXAMPLES / f"{version}.yaml")


def example_data(version: str = "v1") -> dict:
    return yaml.safe_load((EXAMPLES / f"{version}.yaml").read_text(encoding="utf-8"))


def lines(diff: HarnessDiff) -> list[str]:
    return [f"[{c.classification}] {c.summary}" for c in diff.changes]


def edited(change, version: str = "v1") -> tuple[Harness, Harness]:
    """v1 (or `version`) and a copy edited in place by `change(data)`."""
    data = example_data(version)
    after = copy.deepcopy(data)
    change(after)
    return harness_from_data(data), harness_from_data(after)


def diff_of(change, version: str = "v1") -> HarnessDiff:
    return diff_harness(*edited(change, version))


def tool_of(data: dict, tool_id: str) -> dict:
    return next(t for t in data["tools"] if t["id"] == tool_id)


def hook_of(data: dict, hook_id: str) -> dict:
    return next(h for h in data["hooks"] if h["id"] == hook_id)


def section_of(data: dict, section_id: str) -> dict:
    return next(s for s in data["prompt"]["sections"] if s["id"] == section_id)


# --- the example weeks ------------------------------------------------------------------------

V1_TO_V2 = [
    "[surface] harness description reworded",
    "[surface] skill price_coupon renamed: price_and_coupons -> pricing",
    "[surface] skill stock_check renamed: stock_check -> inventory",
    "[surface] skill logistics description reworded",
    "[surface] tool product.search renamed: search_products -> find_products",
    "[surface] tool size.recommend parameter weight_kg renamed: weight_kg -> weight",
    "[surface] tool product.price renamed: get_price -> query_price",
    "[surface] tool product.price description reworded",
    "[surface] tool stock.check renamed: check_stock -> get_inventory",
    "[surface] tool stock.check parameter sku renamed: sku -> variant",
    "[surface] tools reordered",
    "[surface] section tool_use body reworded",
    "[surface] hook compliance.medical_claims action message reworded",
]

V2_TO_V3 = [
    "[surface] harness description reworded",
    "[semantic] skill bundle_deals added: bundle_deals",
    "[semantic] skill price_coupon tools changed: +bundle.offers",
    "[semantic] tool bundle.offers added: get_bundle_offers",
]

V3_TO_V4 = [
    "[surface] harness description reworded",
    "[surface] skill logistics instructions reworded",
    "[semantic] tool price.calc parameter quantity maximum changed: unset -> 99",
    "[surface] tool price.calc parameter coupon_ids renamed: coupon_ids -> coupon_code",
    "[semantic] tool price.calc parameter coupon_code type changed: array -> string",
    '[semantic] tool price.calc parameter coupon_code items changed: {"type":"string"} -> unset',
    "[surface] tool price.calc parameter coupon_code description reworded",
    "[semantic] tool shipping.estimate parameter district added (required)",
    "[semantic] hook compliance.absolute_claims words changed: +全网最低, +史上最强",
    "[semantic] hook tools.error_handoff limit changed: 2 -> 3",
]


def test_v1_to_v2_is_a_pure_rename_week():
    diff = diff_harness(example("v1"), example("v2"))
    assert lines(diff) == V1_TO_V2
    assert diff.is_surface_only and diff.semantic == ()
    assert len(diff.surface) == 13


def test_v1_to_v2_changes_carry_ids_paths_and_values():
    by_path = {c.path: c for c in diff_harness(example("v1"), example("v2")).changes}
    price = by_path["tools[product.price].name"]
    assert (price.kind, price.element, price.element_id) == ("renamed", "tool", "product.price")
    assert (price.before, price.after) == ("get_price", "query_price")
    sku = by_path["tools[stock.check].parameters.properties.variant"]
    assert (sku.element, sku.element_id, sku.before, sku.after) == (
        "parameter", "stock.check.variant", "sku", "variant")
    order = by_path["tools"]
    assert order.before[3:5] == ["product.price", "coupon.list"]
    assert order.after[3:5] == ["coupon.list", "product.price"]


def test_v2_to_v3_adds_a_skill_and_a_tool():
    diff = diff_harness(example("v2"), example("v3"))
    assert lines(diff) == V2_TO_V3
    assert [(c.kind, c.element, c.element_id) for c in diff.semantic] == [
        ("added", "skill", "bundle_deals"),
        ("tools_changed", "skill", "price_coupon"),
        ("added", "tool", "bundle.offers"),
    ]
    assert diff.semantic[2].after["parameters"]["required"] == ["product_id"]


def test_v3_to_v4_changes_schemas_and_rules():
    diff = diff_harness(example("v3"), example("v4"))
    assert lines(diff) == V3_TO_V4
    assert not diff.is_surface_only
    assert [c.kind for c in diff.semantic] == [
        "constraint_changed", "type_changed", "constraint_changed", "added",
        "rule_changed", "rule_changed"]


def test_reverse_weeks_mirror_the_forward_ones():
    back = diff_harness(example("v3"), example("v2"))
    assert [(c.kind, c.element_id) for c in back.semantic] == [
        ("removed", "bundle_deals"), ("tools_changed", "price_coupon"),
        ("removed", "bundle.offers")]
    assert diff_harness(example("v2"), example("v1")).is_surface_only


@pytest.mark.parametrize("version", ["v1", "v2", "v3", "v4"])
def test_a_harness_diffed_with_itself_is_empty(version):
    diff = diff_harness(example(version), example(version))
    assert diff.changes == () and diff.is_empty and diff.is_surface_only
    assert format_diff(diff) == "no changes"


# --- matching without ids ---------------------------------------------------------------------

def idless(tools: list[dict], skill_tools: list[str], skill_name: str = "pricing") -> Harness:
    return harness_from_data({
        "harness": "idless",
        "skills": [{"name": skill_name, "description": "说明价格和优惠券", "tools": skill_tools}],
        "tools": tools,
        "prompt": {"sections": [{"id": "skills", "title": "技能", "body": "{skill_list}"}]},
    })


def product_tool(name: str, description: str, returns: str = "") -> dict:
    return {"name": name, "description": description, "returns": returns,
            "parameters": {"type": "object", "required": ["product_id"],
                           "properties": {"product_id": {"type": "string"}}}}


PARCEL = {"name": "track_parcel", "description": "按运单号追踪包裹位置",
          "parameters": {"type": "object", "required": ["waybill", "carrier"],
                         "properties": {"waybill": {"type": "string"},
                                        "carrier": {"type": "string", "enum": ["顺丰", "中通"]}}}}


def test_idless_rename_is_found_by_similarity():
    before = idless([product_tool("get_price", "查询商品的原价和直播间活动价", "原价、活动价"),
                     product_tool("get_return_policy", "查询商品的退换货政策")],
                    ["get_price"])
    after = idless([product_tool("query_price", "查询商品原价与直播间活动价", "原价、活动价"),
                    product_tool("get_return_policy", "查询商品的退换货政策")],
                   ["query_price"], skill_name="pricing_v2")
    diff = diff_harness(before, after)
    assert [c.kind for c in diff.changes] == ["renamed", "renamed", "redescribed"]
    tool = diff.changes[1]
    assert (tool.element, tool.element_id, tool.before, tool.after) == (
        "tool", "query_price", "get_price", "query_price")
    assert "matched by similarity" in tool.summary
    assert diff.changes[0].summary.startswith("skill pricing_v2 renamed: pricing -> pricing_v2")
    assert diff.is_surface_only  # the skill's tool set maps through the tool rename


def test_idless_unrelated_replacement_is_removed_and_added():
    before = idless([product_tool("get_return_policy", "查询商品的退换货政策")], [])
    after = idless([PARCEL], [])
    diff = diff_harness(before, after)
    assert [(c.kind, c.element_id) for c in diff.changes] == [
        ("removed", "get_return_policy"), ("added", "track_parcel")]


def test_explicit_ids_are_never_paired_by_similarity():
    def new_id(data):
        tool_of(data, "product.price")["id"] = "product.price_v2"
        data["skills"][1]["tools"][0] = "product.price_v2"

    diff = diff_of(new_id)
    assert [(c.kind, c.element, c.element_id) for c in diff.changes] == [
        ("tools_changed", "skill", "price_coupon"),
        ("removed", "tool", "product.price"),
        ("added", "tool", "product.price_v2"),
    ]


# --- parameters -------------------------------------------------------------------------------

def test_parameter_added_removed_and_renamed():
    def edit(data):
        props = tool_of(data, "product.search")["parameters"]["properties"]
        props["price_cap"] = {**props.pop("max_price"), "description": "最高多少钱"}
        props["category"] = {"type": "string", "description": "类目"}
        tool_of(data, "returns.policy")["parameters"] = {"type": "object", "properties": {}}
        tool_of(data, "order.status")["parameters"] = {
            "type": "object", "required": ["order_no"],
            "properties": {"order_no": {"type": "integer", "description": "订单编号"}}}
        tool_of(data, "handoff.human")["parameters"] = {
            "type": "object", "required": ["urgency"],
            "properties": {"urgency": {"type": "integer", "description": "紧急程度"},
                           "order_id": {"type": "string", "description": "相关订单号，可选"}}}

    rows = [(c.classification, c.kind, c.element_id) for c in diff_of(edit).changes]
    assert rows == [
        ("semantic", "added", "product.search.category"),
        ("surface", "renamed", "product.search.price_cap"),      # same schema: a rename
        ("surface", "redescribed", "product.search.price_cap"),
        ("semantic", "removed", "returns.policy.product_id"),
        ("surface", "renamed", "order.status.order_no"),         # similar description
        ("semantic", "type_changed", "order.status.order_no"),
        ("surface", "redescribed", "order.status.order_no"),
        ("semantic", "removed", "handoff.human.reason"),         # nothing alike: no rename
        ("semantic", "added", "handoff.human.urgency"),
    ]


def test_parameter_type_required_enum_and_constraints():
    def edit(data):
        params = tool_of(data, "shipping.estimate")["parameters"]
        params["properties"]["city"]["enum"] = ["杭州", "上海"]
        params["required"] = ["product_id"]
        calc = tool_of(data, "price.calc")["parameters"]["properties"]
        calc["quantity"]["type"] = "number"
        calc["quantity"]["minimum"] = 2
        calc["coupon_ids"]["items"] = {"type": "string", "pattern": "^C[0-9]+$"}

    changes = diff_of(edit).changes
    assert [(c.kind, c.path, c.before, c.after) for c in changes] == [
        ("type_changed", "tools[price.calc].parameters.properties.quantity.type",
         "integer", "number"),
        ("constraint_changed", "tools[price.calc].parameters.properties.quantity.minimum", 1, 2),
        ("constraint_changed", "tools[price.calc].parameters.properties.coupon_ids.items",
         {"type": "string"}, {"type": "string", "pattern": "^C[0-9]+$"}),
        ("required_changed", "tools[shipping.estimate].parameters.required", True, False),
        ("enum_changed", "tools[shipping.estimate].parameters.properties.city.enum",
         None, ["杭州", "上海"]),
    ]
    assert all(c.classification == "semantic" for c in changes)
    assert changes[3].summary.endswith("city required changed: required -> optional")


def test_parameter_wording_and_order_are_surface():
    def edit(data):
        props = tool_of(data, "size.recommend")["parameters"]["properties"]
        props["height_cm"]["description"] = "观众身高，单位厘米"
        tool_of(data, "size.recommend")["parameters"]["properties"] = dict(reversed(props.items()))
        tool_of(data, "price.calc")["parameters"]["properties"]["coupon_ids"]["items"][
            "description"] = "优惠券编号"

    diff = diff_of(edit)
    assert lines(diff) == [
        "[surface] tool size.recommend parameter height_cm description reworded",
        "[surface] tool size.recommend parameters reordered",
        "[surface] tool price.calc parameter coupon_ids items wording reworded",
    ]


def test_enum_values_added_and_removed():
    def edit(data):
        tool_of(data, "shipping.estimate")["parameters"]["properties"]["city"]["enum"] = ["杭州"]

    before, after = edited(edit)
    forward = diff_harness(before, after).changes
    _, more = edited(lambda d: tool_of(d, "shipping.estimate")["parameters"]["properties"][
        "city"].update(enum=["上海", "杭州"]))
    changed = diff_harness(after, more).changes
    assert forward[0].summary.endswith("enum changed: unset -> [\"杭州\"]")
    assert changed[0].summary.endswith("city enum changed: +上海")


# --- skills, harness line ---------------------------------------------------------------------

def test_skill_tool_set_order_and_wording():
    def edit(data):
        data["skills"][0]["tools"] = ["product.search", "product.info"]   # size.recommend gone
        data["skills"][7]["tools"] = ["handoff.human", "order.status"]
        data["skills"][2]["triggers"] = ["还有库存吗"]
        data["skills"][3], data["skills"][4] = data["skills"][4], data["skills"][3]
        data["harness"] = "live-stream-avatar-b"

    diff = diff_of(edit)
    assert lines(diff) == [
        "[semantic] harness line changed: live-stream-avatar -> live-stream-avatar-b",
        "[semantic] skill product_qa tools changed: -size.recommend",
        "[surface] skill stock_check triggers reworded",
        "[surface] skill human_handoff tools reordered",
        "[surface] skills reordered",
    ]


# --- prompt -----------------------------------------------------------------------------------

def test_section_reworded_is_surface_with_a_text_diff():
    diff = diff_of(lambda d: section_of(d, "output_format").update(
        body="用简短的口语化中文回复。\n先给结论，再补充细节。"))
    (change,) = diff.changes
    assert (change.classification, change.kind, change.path) == (
        "surface", "edited", "prompt.sections[output_format].body")
    assert change.text_diff.splitlines() == [
        "--- a/prompt.sections[output_format].body",
        "+++ b/prompt.sections[output_format].body",
        "@@ -1 +1,2 @@",
        "-用简短口语化的中文回复，先给结论再补充细节；回复弹幕不超过 40 个字。",
        "+用简短的口语化中文回复。",
        "+先给结论，再补充细节。",
    ]
    assert change.text_diff in format_diff(diff)


def test_rules_section_and_placeholder_edits_are_semantic():
    def edit(data):
        rules = section_of(data, "rules")
        rules["body"] = rules["body"].replace("订单和支付问题转人工处理", "订单问题转人工")
        section_of(data, "persona")["body"] = "你是数字人主播{host_name}，语气亲切。"

    assert lines(diff_of(edit)) == [
        "[semantic] section persona body edited, placeholders changed: -{shop_name}",
        "[semantic] section rules body edited (a rules section)",
    ]


def test_sections_added_removed_retitled_reordered_and_style():
    def edit(data):
        sections = data["prompt"]["sections"]
        sections.pop()                                   # output_format
        sections.insert(0, {"id": "greeting", "title": "开场", "body": "欢迎来到直播间。"})
        sections[1]["title"] = "人设"
        sections[2], sections[3] = sections[3], sections[2]
        data["prompt"]["style"] = {"heading": "### {title}"}
        data["prompt"]["language"] = "zh-CN"
        data["prompt"]["variables"]["host_name"] = "小月"

    assert lines(diff_of(edit)) == [
        "[surface] prompt language changed: zh -> zh-CN",
        "[surface] prompt style heading changed: \"## {title}\" -> \"### {title}\"",
        "[semantic] prompt variable host_name changed: 小星 -> 小月",
        "[semantic] section output_format removed: 输出格式",
        "[semantic] section greeting added: 开场",
        "[surface] section persona title renamed: 角色 -> 人设",
        "[surface] prompt sections reordered",
    ]


# --- hooks ------------------------------------------------------------------------------------

def test_hook_rule_changes_are_semantic_and_wording_surface():
    def edit(data):
        hook_of(data, "compliance.absolute_claims")["condition"]["words"].remove("绝对")
        hook_of(data, "compliance.medical_claims")["condition"]["patterns"] = ["治愈"]
        hook_of(data, "grounding.prices")["description"] = "价格只能来自工具结果"
        hook_of(data, "tools.argument_check")["action"]["message"] = "参数不对，请重新调用。"
        hook_of(data, "tools.error_handoff")["event"] = "after_tool_call"

    assert lines(diff_of(edit)) == [
        "[semantic] hook compliance.absolute_claims words changed: -绝对",
        "[semantic] hook compliance.medical_claims patterns changed: "
        "+治愈, -(治疗|治愈|根治|预防)[^，。]{0,6}(病|癌|炎|失眠)",
        "[surface] hook grounding.prices description reworded",
        "[surface] hook tools.argument_check action message reworded",
        "[semantic] hook tools.error_handoff event changed: on_tool_error -> after_tool_call",
    ]


def test_hook_types_added_removed_and_reordered():
    def edit(data):
        hook_of(data, "grounding.prices")["condition"] = {"type": "forbidden_words",
                                                          "words": ["包邮"]}
        hook_of(data, "tools.argument_check")["action"] = {"type": "handoff", "message": "转人工"}
        data["hooks"] = [h for h in data["hooks"] if h["id"] != "compliance.medical_claims"]
        data["hooks"].reverse()
        data["hooks"].append({"id": "tone.rewrite", "event": "before_response",
                              "condition": {"type": "forbidden_words", "words": ["亲"]},
                              "action": {"type": "rewrite", "replacement": "您"}})

    diff = diff_of(edit)
    assert [(c.classification, c.kind, c.element_id) for c in diff.changes] == [
        ("semantic", "removed", "compliance.medical_claims"),
        ("semantic", "added", "tone.rewrite"),
        ("semantic", "action_changed", "tools.argument_check"),
        ("semantic", "condition_changed", "grounding.prices"),
        ("surface", "reordered", ""),
    ]
    assert diff.changes[3].after == {"type": "forbidden_words", "words": ["包邮"]}


# --- the result types -------------------------------------------------------------------------

@pytest.mark.parametrize("pair", [("v1", "v2"), ("v3", "v4"), ("v2", "v3")])
def test_json_round_trip(pair):
    diff = diff_harness(example(pair[0]), example(pair[1]))
    data = json.loads(json.dumps(diff.to_dict(), ensure_ascii=False))
    assert HarnessDiff.from_dict(data) == diff
    assert data["counts"] == {"surface": len(diff.surface), "semantic": len(diff.semantic)}
    assert data["surface_only"] is diff.is_surface_only


def test_change_refuses_unknown_values():
    with pytest.raises(ValueError, match="unknown classification 'cosmetic'; valid: surface"):
        Change("renamed", "tool", "x", "tools[x].name", "cosmetic", "tool x renamed")
    with pytest.raises(ValueError, match="unknown kind"):
        Change("moved", "tool", "x", "tools", "surface", "tool x moved")


def test_format_groups_by_class():
    text = format_diff(diff_harness(example("v2"), example("v3")))
    assert text.splitlines() == [
        "4 changes (1 surface, 3 semantic): semantic",
        "",
        "surface (1):",
        "[surface] harness description reworded",
        "",
        "semantic (3):",
        *V2_TO_V3[1:],
    ]
