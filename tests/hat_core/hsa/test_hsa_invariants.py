"""The HSA invariants, property-tested over many seeds and the four example harnesses.

Every variant validates; the diff against the original has no semantic change (distractor
tools, an addition, are checked apart); mapping back gives identical semantics; held-out
names never reach a training variant; the same seed gives the same variant.
"""

from __future__ import annotations

import random
from dataclasses import replace

from hsa_examples import HARNESSES, VERSIONS
from hypothesis import given, settings
from hypothesis import strategies as st

from hat_core.diff.api import diff_harness
from hat_core.harness.io import dump_harness, harness_from_data, parse_harness
from hat_core.harness.model import Harness
from hat_core.hsa.augment import augment
from hat_core.hsa.config import TRANSFORMS, HsaConfig
from hat_core.hsa.fingerprint import map_back, semantic_fingerprint, semantic_view
from hat_core.hsa.heldout import introduced_names, name_is_heldout, uses_heldout, uses_train
from hat_core.hsa.variant import DISTRACTOR_PREFIX

ALL = HsaConfig().with_weights({t: 0.7 for t in TRANSFORMS})
seeds = st.integers(0, 2**63)
versions = st.sampled_from(VERSIONS)


def _variant(seed: int, version: str, pool: str = "train", config: HsaConfig = ALL):
    original = HARNESSES[version]
    return original, augment(original, random.Random(seed), replace(config, pool=pool))


@settings(max_examples=100, deadline=None)
@given(seed=seeds, version=versions, pool=st.sampled_from(("train", "heldout")))
def test_every_variant_validates_and_round_trips_through_yaml(seed, version, pool):
    _, v = _variant(seed, version, pool)
    assert harness_from_data(v.harness.model_dump(mode="json")) == v.harness
    assert parse_harness(dump_harness(v.harness)) == v.harness


@settings(max_examples=100, deadline=None)
@given(seed=seeds, version=versions, pool=st.sampled_from(("train", "heldout")))
def test_the_diff_calls_every_change_surface(seed, version, pool):
    original, v = _variant(seed, version, pool)
    d = diff_harness(original, v.harness)
    semantic = [c for c in d.semantic if not c.element_id.startswith(DISTRACTOR_PREFIX)]
    assert not semantic, [c.summary for c in semantic]
    if not v.distractors:
        assert d.is_surface_only


@settings(max_examples=100, deadline=None)
@given(seed=seeds, version=versions)
def test_distractors_are_unreferenced_additions(seed, version):
    original, v = _variant(seed, version, config=HsaConfig().only("distractors"))
    assert v.distractors and all(i.startswith(DISTRACTOR_PREFIX) for i in v.distractors)
    referenced = {t for s in v.harness.skills for t in s.tools}
    assert not referenced & set(v.distractors)
    d = diff_harness(original, v.harness)
    assert {(c.kind, c.element, c.element_id) for c in d.semantic} == {
        ("added", "tool", i) for i in v.distractors}
    assert d.is_surface_only is False


@settings(max_examples=100, deadline=None)
@given(seed=seeds, version=versions, pool=st.sampled_from(("train", "heldout")))
def test_mapping_back_gives_identical_semantics(seed, version, pool):
    original, v = _variant(seed, version, pool)
    back = map_back(v)
    assert semantic_view(back) == semantic_view(original)
    assert semantic_fingerprint(back) == semantic_fingerprint(original)
    _assert_semantics_untouched(original, back)


def _assert_semantics_untouched(original: Harness, back: Harness) -> None:
    """Parameter types, required fields, enums and hook conditions, field by field."""
    for tool in original.tools:
        mapped = back.tool(tool.id)
        assert mapped.name == tool.name
        assert set(mapped.parameters.get("required", [])) == set(
            tool.parameters.get("required", []))
        for name, schema in tool.parameters.get("properties", {}).items():
            other = mapped.parameters["properties"][name]
            assert other.get("type") == schema.get("type")
            assert other.get("enum") == schema.get("enum")
    assert [(h.id, h.event, h.condition, h.action.type) for h in back.hooks] == [
        (h.id, h.event, h.condition, h.action.type) for h in original.hooks]
    assert {s.id: set(s.tools) for s in back.skills} == {
        s.id: set(s.tools) for s in original.skills}


@settings(max_examples=200, deadline=None)
@given(seed=seeds, version=versions)
def test_heldout_names_and_templates_never_reach_training_variants(seed, version):
    _, v = _variant(seed, version, "train")
    assert not [n for n in introduced_names(v) if name_is_heldout(n)]
    assert not uses_heldout(v)


@settings(max_examples=100, deadline=None)
@given(seed=seeds, version=versions)
def test_heldout_variants_are_recognised(seed, version):
    cfg = HsaConfig(pool="heldout").only("rename_tools", "prompt_template")
    _, v = _variant(seed, version, "heldout", cfg)
    assert uses_heldout(v)
    assert all(name_is_heldout(n) for n in introduced_names(v))
    assert not uses_train(v)


@settings(max_examples=50, deadline=None)
@given(seed=seeds, version=versions)
def test_the_same_seed_gives_the_same_variant(seed, version):
    _, a = _variant(seed, version)
    _, b = _variant(seed, version)
    assert a == b


def test_semantic_changes_do_change_the_fingerprint(v1):
    """The property above can fail: each kind of semantic edit moves the fingerprint."""
    base = semantic_fingerprint(v1)
    data = v1.model_dump(mode="json")
    edits = [
        lambda d: d["tools"][2]["parameters"]["properties"]["height_cm"].update(type="number"),
        lambda d: d["tools"][2]["parameters"]["required"].pop(),
        lambda d: d["tools"][0]["parameters"]["properties"]["product_id"].update(enum=["P1"]),
        lambda d: d["hooks"][0]["condition"]["words"].append("爆款"),
        lambda d: d["hooks"][4]["action"].update(type="block_retry"),
        lambda d: d["skills"][0]["tools"].pop(),
        lambda d: d["prompt"]["sections"][1].update(body="1. 随便说。\n{hook_rules}"),
    ]
    for edit in edits:
        changed = _edited(data, edit)
        assert semantic_fingerprint(changed) != base


def _edited(data: dict, edit) -> Harness:
    import copy
    copied = copy.deepcopy(data)
    edit(copied)
    return Harness.model_validate(copied)


def test_surface_changes_keep_the_fingerprint(v1):
    data = v1.model_dump(mode="json")
    for edit in (lambda d: d["tools"][0].update(name="fetch", description="x"),
                 lambda d: d["tools"].reverse(),
                 lambda d: d["prompt"]["style"].update(heading="<{title}>")):
        assert semantic_fingerprint(_edited(data, edit)) == semantic_fingerprint(v1)
