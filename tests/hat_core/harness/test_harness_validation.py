"""Validation: one test per error class, every problem reported at once with its path."""

from __future__ import annotations

import copy

import pytest
import yaml

from hat_core.errors import HarnessError
from hat_core.harness.io import (
    MAX_BYTES,
    MAX_DEPTH,
    harness_from_data,
    load_harness,
    parse_harness,
)


@pytest.fixture(scope="module")
def v1_data(v1_path) -> dict:
    return yaml.safe_load(v1_path.read_text(encoding="utf-8"))


def problems_of(data) -> list[str]:
    with pytest.raises(HarnessError) as info:
        harness_from_data(data)
    return [str(p) for p in info.value.problems]


def edit(v1_data, fn) -> dict:
    data = copy.deepcopy(v1_data)
    fn(data)
    return data


def test_missing_required_field(v1_data):
    data = edit(v1_data, lambda d: d["tools"][1].pop("description"))
    assert problems_of(data) == ["tools[1].description: required field is missing"]


def test_unknown_field(v1_data):
    data = edit(v1_data, lambda d: d["skills"][0].update(colour="red"))
    assert problems_of(data) == ["skills[0].colour: unknown field"]


def test_wrong_type(v1_data):
    data = edit(v1_data, lambda d: d["skills"][2].update(tools="stock.check"))
    assert problems_of(data)[0].startswith("skills[2].tools: ")


def test_duplicate_ids(v1_data):
    data = edit(v1_data, lambda d: d["tools"][5].update(id="product.info"))
    assert "tools[5].id: duplicate id 'product.info'" in problems_of(data)


def test_duplicate_names(v1_data):
    data = edit(v1_data, lambda d: d["skills"][3].update(name="product_qa"))
    assert problems_of(data) == ["skills[3].name: duplicate name 'product_qa'"]


def test_dangling_tool_reference(v1_data):
    data = edit(v1_data, lambda d: d["skills"][2]["tools"].insert(0, "get_price"))
    assert problems_of(data) == ["skills[2].tools[0]: unknown tool 'get_price'"]


def test_invalid_json_schema(v1_data):
    data = edit(v1_data, lambda d: d["tools"][0]["parameters"]["properties"]["product_id"]
                .update(type="text"))
    [problem] = problems_of(data)
    assert problem.startswith("tools[0].parameters.properties.product_id.type: invalid JSON Schema")


def test_required_parameter_must_exist(v1_data):
    data = edit(v1_data, lambda d: d["tools"][0]["parameters"]["required"].append("sku"))
    assert problems_of(data) == [
        "tools[0].parameters.required[1]: required parameter 'sku' is not in properties"]


def test_unknown_hook_event(v1_data):
    data = edit(v1_data, lambda d: d["hooks"][0].update(event="after_response"))
    [problem] = problems_of(data)
    assert problem.startswith("hooks[0].event: unknown hook event 'after_response'; valid: ")


def test_unknown_condition_type(v1_data):
    data = edit(v1_data, lambda d: d["hooks"][1]["condition"].update(type="sentiment"))
    [problem] = problems_of(data)
    assert problem.startswith("hooks[1].condition: unknown type 'sentiment'; valid:")


def test_invalid_hook_pattern(v1_data):
    data = edit(v1_data, lambda d: d["hooks"][1]["condition"].update(patterns=["(治疗"]))
    [problem] = problems_of(data)
    assert problem.startswith("hooks[1].condition.patterns[0]: invalid regular expression")


def test_unknown_placeholder(v1_data):
    data = edit(v1_data, lambda d: d["prompt"]["sections"][0].update(body="我是{anchor_name}"))
    [problem] = problems_of(data)
    assert problem.startswith("prompt.sections[0].body: unknown placeholder {anchor_name}")


def test_unfilled_variable(v1_data):
    data = edit(v1_data, lambda d: d["prompt"]["variables"].update(host_name=" "))
    assert problems_of(data) == ["prompt.variables.host_name: variable is declared but empty"]


@pytest.mark.parametrize("name", ["get price", "价格", "1tool", "a" * 65, "get.price"])
def test_invalid_tool_identifier(v1_data, name):
    data = edit(v1_data, lambda d: d["tools"][3].update(name=name))
    [problem] = problems_of(data)
    assert problem.startswith(f"tools[3].name: tool name {name!r} is not a valid identifier")


def test_invalid_parameter_identifier(v1_data):
    def rename(d):
        props = d["tools"][0]["parameters"]["properties"]
        props["product id"] = props.pop("product_id")
        d["tools"][0]["parameters"]["required"] = ["product id"]
    assert problems_of(edit(v1_data, rename)) == [
        "tools[0].parameters.properties.product id: parameter name 'product id' is not a valid "
        "identifier (letters, digits, _ or -, starting with a letter or _, max 64)"]


def test_every_problem_at_once(v1_data):
    def break_many(d):
        d["skills"][0]["tools"][0] = "nope"
        d["tools"][2]["name"] = "bad name"
        d["hooks"][2]["event"] = "later"
        d["prompt"]["sections"][1]["body"] += "{missing}"
        d["tools"][4].pop("description")
    problems = problems_of(edit(v1_data, break_many))
    assert len(problems) == 5
    paths = sorted(p.split(":")[0] for p in problems)
    assert paths == ["hooks[2].event", "prompt.sections[1].body", "skills[0].tools[0]",
                     "tools[2].name", "tools[4].description"]


def test_not_a_mapping():
    with pytest.raises(HarnessError, match="must be a mapping"):
        harness_from_data(["a", "list"])


def test_yaml_syntax_error_names_the_line():
    with pytest.raises(HarnessError, match=r"line 4, column 4"):
        parse_harness("harness: x\nskills:\n  - a: 1\n   b: 2\n")


def test_empty_document():
    with pytest.raises(HarnessError, match="empty"):
        parse_harness("")


def test_duplicate_yaml_key_is_refused():
    with pytest.raises(HarnessError, match="duplicate key 'name' \\(line 3\\)"):
        parse_harness("tools:\n  - name: a\n    name: b\n")


def test_oversize_file_refused_before_parsing(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * MAX_BYTES + "\n")
    with pytest.raises(HarnessError, match="over the"):
        load_harness(path)


def test_deep_nesting_refused():
    text = "a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
    with pytest.raises(HarnessError, match="deeper than"):
        parse_harness(text)


def test_very_deep_nesting_refused_without_recursion_error():
    with pytest.raises(HarnessError):
        parse_harness("[" * 100_000)


def test_alias_bomb_refused_quickly():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    with pytest.raises(HarnessError, match="expands to over"):
        parse_harness("\n".join(lines))


def test_recursive_alias_refused():
    with pytest.raises(HarnessError):
        parse_harness("a: &a [*a]")


def test_missing_file_and_binary_file(tmp_path):
    with pytest.raises(HarnessError, match="no such harness file"):
        load_harness(tmp_path / "none.yaml")
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(HarnessError, match="not UTF-8"):
        load_harness(path)


def _meta_valid(schema) -> bool:
    import jsonschema
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return False
    return True


def test_the_cached_schema_check_agrees_with_jsonschema():
    """The shape a schema is checked by (names and texts made equal) is valid exactly when
    the schema is: on every example tool, on renamed copies and on broken ones."""
    from hat_core.harness.check import _schema_shape_valid, _shape, _shape_key
    from hat_core.harness.io import load_harness

    schemas = [t.parameters for name in ("v1", "v2", "v3", "v4")
               for t in load_harness(f"examples/harnesses/{name}.yaml").tools]
    base = {"type": "object", "properties": {"sku": {"type": "string", "description": "x"}},
            "required": ["sku"]}
    renamed = {**base, "properties": {"variant": {"type": "string", "description": "y"}},
               "required": ["variant"]}
    schemas += [
        renamed,
        {**base, "properties": {"sku": {"type": "strin"}}},             # unknown type
        {**base, "required": [1]},                                      # not a string
        {**base, "required": ["sku", "sku"]},                           # not unique
        {**base, "properties": {"sku": {"type": "string", "description": 3}}},
        {**base, "properties": {"sku": {"type": "string", "title": ["t"]}}},
        {**base, "properties": {"sku": {"type": "array", "items": {"type": 7}}}},
        {**base, "properties": "sku"},
        {**base, "properties": {"sku": {"properties": {"a": {"minimum": "0"}}}}},
    ]
    for schema in schemas:
        assert _schema_shape_valid(_shape_key(schema)) == _meta_valid(schema), schema
        assert _meta_valid(_shape(schema)) == _meta_valid(schema), schema
    assert _shape_key(base) == _shape_key(renamed)  # a renamed copy shares one check
