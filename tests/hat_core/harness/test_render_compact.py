"""The compact render profile: every name present, HSA variants differ, far shorter than
`full`, the default unchanged, the simulator binding follows the active profile."""

from __future__ import annotations

import json
import random

import pytest

from hat_core.errors import ConfigError
from hat_core.harness.io import load_harness
from hat_core.harness.render import (
    active_profile,
    render,
    render_system_prompt,
    render_tools,
    short_description,
    use_profile,
)
from hat_core.hsa import HsaConfig, augment
from hat_core.sim.binding import bind


@pytest.fixture(scope="module")
def harnesses(examples_dir):
    return [load_harness(examples_dir / f"v{i}.yaml") for i in range(1, 5)]


def test_every_tool_param_and_skill_name_appears(harnesses):
    for h in harnesses:
        prompt = render(h, "compact").system_prompt
        for tool in h.tools:
            line = next(x for x in prompt.splitlines() if f": {tool.name}(" in x)
            for param in tool.param_names:
                assert param in line
        for skill in h.skills:
            assert f": {skill.name}" in prompt


def test_hsa_variants_render_differently(harnesses):
    v1 = harnesses[0]
    original = render(v1, "compact").system_prompt
    for pool in ("train", "heldout"):
        prompts = {render(augment(v1, random.Random(s), HsaConfig(pool=pool)).harness,
                          "compact").system_prompt for s in range(6)}
        assert original not in prompts and len(prompts) == 6


def test_far_shorter_than_full(harnesses):
    for h in harnesses:
        full = render(h)
        full_chars = len(full.system_prompt) + len(json.dumps(full.tools, ensure_ascii=False))
        assert len(render(h, "compact").system_prompt) * 4 < full_chars
        assert render(h, "compact").tools == []


def test_default_is_full_and_unchanged(harnesses):
    h = harnesses[0]
    assert active_profile() == "full"
    assert render(h).system_prompt == render_system_prompt(h)
    assert render(h).tools == render_tools(h) and render(h) == render(h, "full")
    with use_profile("compact"):
        assert active_profile() == "compact"
        assert render(h) == render(h, "compact")
    assert active_profile() == "full"


def test_binding_follows_the_active_profile(harnesses):
    h = harnesses[1]
    full = bind(h).rendered
    with use_profile("compact"):
        compact = bind(h).rendered
    assert compact.system_prompt == render(h, "compact").system_prompt
    assert bind(h).rendered == full != compact


def test_unknown_profile_lists_the_valid_ones(harnesses):
    with pytest.raises(ConfigError) as err:
        render(harnesses[0], "tiny")
    assert "compact" in err.value.report()
    with pytest.raises(ConfigError), use_profile("nope"):
        pass


def test_short_description_drops_lead_ins_and_keeps_content():
    assert short_description("作用 => 查询商品的原价和直播间活动价") == "查询商品的原价和直播间活"
    assert short_description("Purpose: find books by the author name") == "find books by the"
    assert short_description("估算商品发往某个城市的配送时效（天）") == "估算商品发往某个城市的配"


def test_compact_args_adds_each_parameters_description(harnesses):
    v1, v2 = harnesses[0], harnesses[1]
    prompt = render(v1, "compact-args").system_prompt
    assert "check_stock(product_id 商品编号, sku? 规格)" in prompt
    assert "recommend_size(product_id 商品编号, height_cm 身高, weight_kg 体重)" in prompt
    # v2 renames sku -> variant and weight_kg -> weight; the descriptions still say what
    # they hold, which plain `compact` cannot
    renamed = render(v2, "compact-args").system_prompt
    assert "get_inventory(product_id 商品编号, variant? 规格)" in renamed
    assert "weight 体重)" in renamed and "weight)" in render(v2, "compact").system_prompt
    assert render(v1, "compact-args").tools == []


def test_compact_args_keeps_the_compact_lines_otherwise(harnesses):
    for h in harnesses:
        plain = render(h, "compact").system_prompt.splitlines()
        args = render(h, "compact-args").system_prompt.splitlines()
        assert len(plain) == len(args)
        for a, b in zip(plain, args, strict=True):
            assert a == b or (a.split("(")[0] == b.split("(")[0] and len(b) > len(a))
    with use_profile("compact-args"):
        assert bind(harnesses[0]).rendered == render(harnesses[0], "compact-args")


def test_compact_args_follows_a_parameter_rename(harnesses):
    variant = augment(harnesses[0], random.Random(3), HsaConfig(pool="train")).harness
    prompt = render(variant, "compact-args").system_prompt
    for tool in variant.tools:
        line = next(x for x in prompt.splitlines() if f": {tool.name}(" in x)
        for name, spec in tool.parameters.get("properties", {}).items():
            note = short_description(spec.get("description", ""), 6)
            assert (f"{name} {note}" if note else name) in line or f"{name}? {note}" in line


def test_compact_args_long_shows_whole_descriptions(harnesses):
    v2 = harnesses[1]
    short = render(v2, "compact-args").system_prompt
    long = render(v2, "compact-args-long").system_prompt
    # v2's price tool: cut at 12 characters it loses what it prices
    assert "- 查询商品原价与本场直播的: query_price(" in short
    assert "- 查询商品原价与本场直播的活动价: query_price(product_id 商品编号)" in long
    assert short.replace("商品编号", "") != long.replace("商品编号", "")
