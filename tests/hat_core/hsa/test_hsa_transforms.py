"""The single transforms: describe (and paraphrasers), prompt template, hooks, reorder,
distractors, and edit-aware weighting."""

from __future__ import annotations

import random
import urllib.error
from dataclasses import replace

import pytest
from hsa_examples import HARNESSES

from hat_core.diff.api import diff_harness
from hat_core.harness.model import PLACEHOLDER
from hat_core.hsa.augment import augment
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.describe import OpenAIParaphraser, TemplateParaphraser, describe, keeps_markers
from hat_core.hsa.edit_aware import edit_aware_config, transform_votes
from hat_core.hsa.vocab import HELDOUT, TRAIN

ALWAYS = {"redescribe_text": 1.0, "hook_message": 1.0, "section_wording": 1.0,
          "shuffle_sections": 1.0, "reorder_params": 1.0}


def only(*names: str, pool: str = "train") -> HsaConfig:
    cfg = HsaConfig(pool=pool).only(*names)
    return replace(cfg, probabilities={**cfg.probabilities, **ALWAYS})


class FakeEndpoint(OpenAIParaphraser):
    """The OpenAI paraphraser with the network replaced by canned replies."""

    def __init__(self, replies, **kw):
        super().__init__("http://127.0.0.1:9/v1", "fake", **kw)
        self.replies, self.payloads = list(replies), []

    def _post(self, payload):
        self.payloads.append(payload)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return {"choices": [{"message": {"content": reply}}]}


def test_template_paraphraser_rewords_and_keeps_markers():
    rng = random.Random(0)
    text = "按商品编号 product_id 查询{shop_name}的 3 件商品"
    outs = {TemplateParaphraser(TRAIN).paraphrase(text, kind="tool", language="zh", rng=rng)
            for _ in range(30)}
    assert len(outs) > 3 and all(keeps_markers(text, o) for o in outs)


def test_keeps_markers_rejects_lost_names_numbers_and_placeholders():
    text = "用 get_price 查 {shop_name} 的 2 件"
    assert keeps_markers(text, "请用 get_price 查询 {shop_name} 的 2 件")
    assert not keeps_markers(text, "用 fetch 查 {shop_name} 的 2 件")
    assert not keeps_markers(text, "用 get_price 查 {shop_name} 的 3 件")
    assert not keeps_markers(text, "用 get_price 查 店铺 的 2 件")


def test_openai_paraphraser_uses_good_replies_and_refuses_bad_ones(v1):
    tools = len(v1.tools)
    fake = FakeEndpoint(["改写后的描述"] * 200)
    out = describe(v1, random.Random(0), only("describe"), fake)
    assert [t.description for t in out.tools] == ["改写后的描述"] * tools
    payload = fake.payloads[0]
    assert payload["model"] == "fake" and payload["messages"][0]["role"] == "system"
    fake_bad = FakeEndpoint(["丢了名字"] * 200)
    text = "先用 get_price 查价"
    data = v1.model_dump(mode="json")
    data["skills"][1]["instructions"] = text
    from hat_core.harness.model import Harness
    out = describe(Harness.model_validate(data), random.Random(0), only("describe"), fake_bad)
    assert out.skill("price_coupon").instructions == text


def test_openai_paraphraser_retries_then_gives_up_quietly():
    fake = FakeEndpoint([urllib.error.URLError("down"), TimeoutError(), "好的"], retries=2)
    assert fake.paraphrase("原文", kind="tool", language="zh", rng=random.Random(0)) == "好的"
    failing = FakeEndpoint([OSError("x")] * 3, retries=2)
    assert failing.paraphrase("原文", kind="tool", language="zh", rng=random.Random(0)) == "原文"
    assert failing.failures == 1 and len(failing.payloads) == 3


def test_prompt_template_keeps_rules_and_placeholders(v1):
    for seed in range(20):
        v = augment(v1, random.Random(seed), only("prompt_template"))
        before = {s.id: s for s in v1.prompt.sections}
        for s in v.harness.prompt.sections:
            assert set(PLACEHOLDER.findall(s.body)) == set(PLACEHOLDER.findall(before[s.id].body))
            if s.id == "rules":
                assert s.body == before[s.id].body
        style = v.harness.prompt.style
        assert style.heading in TRAIN.headings and style.separator in TRAIN.separators
        assert v.harness.prompt.variables == v1.prompt.variables
        assert diff_harness(v1, v.harness).is_surface_only


def test_language_switch_uses_english_headings_and_items(v1):
    cfg = replace(only("prompt_template"), probabilities={
        **only("prompt_template").probabilities, "language_switch": 1.0})
    v = augment(v1, random.Random(3), cfg)
    assert v.harness.prompt.style.tool_item in TRAIN.tool_items["en"]
    titles = {s.id: s.title for s in v.harness.prompt.sections}
    assert titles["rules"] in TRAIN.section_titles["rules"]["en"]


def test_hooks_vary_messages_only(v1):
    v = augment(v1, random.Random(1), only("hooks", pool="heldout"))
    for before, after in zip(v1.hooks, v.harness.hooks, strict=True):
        assert (after.id, after.event, after.condition, after.action.type) == (
            before.id, before.event, before.condition, before.action.type)
        assert before.action.message in after.action.message
        assert after.action.message != before.action.message
    message = v.harness.hooks[0].action.message
    templates = [*HELDOUT.hook_messages["zh"], *HELDOUT.hook_messages["en"]]
    assert any(message.startswith(t.split("{message}")[0])
               and message.endswith(t.split("{message}")[1]) for t in templates)


def test_reorder_changes_order_only(v1):
    v = augment(v1, random.Random(2), only("reorder"))
    assert [t.id for t in v.harness.tools] != [t.id for t in v1.tools]
    assert sorted(v.harness.tools, key=lambda t: t.id) == sorted(
        [t.model_copy(update={"parameters": v.harness.tool(t.id).parameters}) for t in v1.tools],
        key=lambda t: t.id)
    for t in v1.tools:
        new = v.harness.tool(t.id).parameters
        assert new["properties"] == t.parameters["properties"]
        assert set(new["required"]) == set(t.parameters["required"])


def test_distractor_count_follows_the_config(v1):
    cfg = replace(only("distractors"), max_distractors=2)
    counts = {len(augment(v1, random.Random(s), cfg).distractors) for s in range(30)}
    assert counts == {1, 2}


def test_edit_aware_raises_the_weights_of_the_weeks_change_kinds():
    d = diff_harness(HARNESSES["v1"], HARNESSES["v2"])  # a rename week
    votes = transform_votes(d)
    assert {"rename_tools", "rename_skills", "rename_params"} <= set(votes)
    base = HsaConfig()
    tuned = edit_aware_config(base, d, boost=3.0)
    for name, t in tuned.transforms.items():
        if name in votes:
            assert base.transforms[name].weight < t.weight <= 1.0
        else:
            assert t == base.transforms[name]
    assert edit_aware_config(base, diff_harness(HARNESSES["v1"], HARNESSES["v1"])) == base
    d3 = diff_harness(HARNESSES["v2"], HARNESSES["v3"])  # a new tool week
    assert "distractors" in transform_votes(d3)
    with pytest.raises(ValueError):
        edit_aware_config(base, d, boost=0.5)


def test_variant_streams_are_separated_by_pool_seed_and_index():
    from hat_core.hsa.augment import variant_seed

    seeds = {variant_seed(s, i, pool) for s in range(3) for i in range(8)
             for pool in ("train", "heldout")}
    assert len(seeds) == 48
    assert variant_seed(0, 0, "train") != variant_seed(0, 0, "heldout")


def test_training_and_heldout_streams_of_one_seed_draw_different_transform_sets():
    import random

    from hat_core.hsa import HsaConfig
    from hat_core.hsa.augment import choose_transforms, variant_seed

    config = HsaConfig()  # the same transform weights on both sides: only the seed differs
    train = [choose_transforms(random.Random(variant_seed(0, i, "train")), config)
             for i in range(16)]
    heldout = [choose_transforms(random.Random(variant_seed(0, i, "heldout")), config)
               for i in range(16)]
    assert train != heldout
