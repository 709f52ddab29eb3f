"""The harness model: loading, canonical form, content hash, dumping."""

from __future__ import annotations

import json

import pytest
import yaml
from pydantic import ValidationError

from hat_core.harness.io import dump_harness, harness_from_data, load_harness, parse_harness
from hat_core.harness.model import Harness, canonical_dumps


@pytest.fixture(scope="module")
def v1(v1_path) -> Harness:
    return load_harness(v1_path)


def _reverse_keys(value):
    if isinstance(value, dict):
        return {k: _reverse_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_keys(v) for v in value]
    return value


def test_v1_loads_with_its_parts(v1):
    assert v1.harness == "live-stream-avatar"
    assert len(v1.skills) == 8 and len(v1.tools) == 12 and len(v1.hooks) == 5
    assert v1.tool("product.price").name == "get_price"
    assert v1.tool_by_name("check_stock").id == "stock.check"
    assert v1.tool_by_name("nope") is None
    assert v1.skill("price_coupon").tools == ("product.price", "coupon.list", "price.calc")


def test_model_is_immutable(v1):
    with pytest.raises(ValidationError):
        v1.skills[0].name = "other"


def test_hash_ignores_key_order_and_formatting(v1, v1_path):
    data = yaml.safe_load(v1_path.read_text(encoding="utf-8"))
    as_json = json.dumps(_reverse_keys(data), ensure_ascii=True, indent=4)
    assert parse_harness(as_json).content_hash() == v1.content_hash()
    flow_yaml = yaml.safe_dump(data, default_flow_style=True, allow_unicode=False)
    assert parse_harness(flow_yaml).content_hash() == v1.content_hash()


def test_hash_counts_defaults_as_written(v1):
    data = v1.model_dump(mode="json")
    data["prompt"].pop("style")  # omitted style == the default style
    assert harness_from_data(data).content_hash() == v1.content_hash()


def test_hash_changes_with_content(v1):
    data = v1.model_dump(mode="json")
    data["tools"][0]["description"] += "。"
    assert harness_from_data(data).content_hash() != v1.content_hash()
    reordered = v1.model_dump(mode="json")
    reordered["tools"] = list(reversed(reordered["tools"]))
    assert harness_from_data(reordered).content_hash() != v1.content_hash()


def test_canonical_json_is_sorted_compact_unicode(v1):
    text = v1.canonical_json()
    assert text == canonical_dumps(json.loads(text))
    assert "星选好物直播间" in text and ": " not in text.split('"')[0]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_dump_round_trips(v1, fmt):
    assert parse_harness(dump_harness(v1, fmt)).content_hash() == v1.content_hash()


def test_dump_rejects_unknown_format(v1):
    with pytest.raises(ValueError, match="valid: yaml, json"):
        dump_harness(v1, "toml")


def test_missing_ids_default_to_names(v1):
    data = v1.model_dump(mode="json")
    for tool in data["tools"]:
        tool.pop("id")
    for skill in data["skills"]:
        skill["tools"] = [v1.tool(t).name for t in skill["tools"]]
    h = harness_from_data(data)
    assert h.tool_by_name("get_price").id == "get_price"
