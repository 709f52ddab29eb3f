"""Rendering: the system prompt and the OpenAI-style tool list."""

from __future__ import annotations

from hat_core.harness.io import harness_from_data, load_harness
from hat_core.harness.render import render


def test_system_prompt_fills_every_placeholder(v1_path):
    rendered = render(load_harness(v1_path))
    prompt = rendered.system_prompt
    assert "{" not in prompt.replace("{title}", "")
    assert "你是星选好物直播间的数字人主播小星" in prompt
    assert "## 技能" in prompt and "## 工具" in prompt
    assert "- price_and_coupons: 说明价格、优惠券和到手价（工具：get_price、list_coupons、" \
           "calc_final_price）" in prompt
    assert "- 回复前检查绝对化用语" in prompt


def test_sections_follow_template_order(v1_path):
    prompt = render(load_harness(v1_path)).system_prompt
    titles = ["## 角色", "## 规则", "## 技能", "## 工具", "## 工具使用", "## 输出格式"]
    positions = [prompt.index(t + "\n") for t in titles]
    assert positions == sorted(positions)


def test_tools_are_openai_functions_in_order(v1_path):
    harness = load_harness(v1_path)
    tools = render(harness).tools
    assert [t["function"]["name"] for t in tools] == [t.name for t in harness.tools]
    price = tools[3]
    assert price["type"] == "function"
    assert price["function"]["parameters"]["required"] == ["product_id"]
    assert price["function"]["description"].endswith("返回：原价、活动价（元）")


def test_style_and_renames_change_what_the_model_sees(v1_path):
    data = load_harness(v1_path).model_dump(mode="json")
    data["prompt"]["style"]["heading"] = "【{title}】"
    data["tools"][3]["name"] = "query_price"
    prompt = render(harness_from_data(data)).system_prompt
    assert "【技能】" in prompt and "## 技能" not in prompt
    assert "query_price" in prompt and "get_price" not in prompt


def test_literal_braces_survive(v1_path):
    data = load_harness(v1_path).model_dump(mode="json")
    data["prompt"]["sections"][-1]["body"] = '输出 JSON：{"reply": "..."}'
    assert '输出 JSON：{"reply": "..."}' in render(harness_from_data(data)).system_prompt
