"""Re-mapped trajectories: the replay invariant in the live-stream simulator, and the tables.

The oracle plays a scenario under the original harness; its trajectory, re-mapped onto a
variant and replayed there (the rename map passed to the binding), gives the same tool
results and the same reward values, and the very messages the simulator records.
"""

from __future__ import annotations

import json
import random

from hsa_examples import HARNESSES, VERSIONS
from hypothesis import given, settings
from hypothesis import strategies as st

from hat_core.hsa.augment import augment
from hat_core.hsa.config import TRANSFORMS, HsaConfig
from hat_core.hsa.remap import Remapper, remap_arguments
from hat_core.hsa.variant import RenameMap, Variant
from hat_core.sim.batch import world
from hat_core.sim.binding import bind
from hat_core.sim.episode import AssistantTurn, ToolCall
from hat_core.sim.policy import OraclePolicy, ScriptedPolicy
from hat_core.sim.runner import run_episode
from hat_core.sim.scoring import score_episode

ALL = HsaConfig().with_weights({t: 0.7 for t in TRANSFORMS})
CATALOG, SCENARIOS = world(11, 15)  # every scenario kind once


class RecordingOracle(OraclePolicy):
    """The oracle, keeping every assistant turn it plays."""

    def __init__(self):
        super().__init__()
        self.steps: list[AssistantTurn] = []

    def act(self, obs):
        step = super().act(obs)
        self.steps.append(step)
        return step


def as_turn(msg: dict, skill: str | None) -> AssistantTurn:
    calls = tuple(ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
                  for c in msg.get("tool_calls") or ())
    return AssistantTurn(content=msg.get("content", ""),
                         reasoning=msg.get("reasoning_content", ""), tool_calls=calls,
                         skill=skill)


def canonical_params(version: str) -> dict[str, dict[str, str]]:
    """The original harness's parameters -> the simulator's canonical ones, per tool."""
    b = bind(HARNESSES[version])
    return {i: dict(t.to_canonical) for i, t in b.tools_by_id.items()}


def tool_results(messages) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**63), version=st.sampled_from(VERSIONS),
       pool=st.sampled_from(("train", "heldout")))
def test_a_remapped_oracle_trajectory_replays_identically_in_the_variant(seed, version, pool):
    original = HARNESSES[version]
    v = augment(original, random.Random(seed), HsaConfig(pool=pool).with_weights(
        {t: 0.7 for t in TRANSFORMS}))
    remapper = Remapper(v, original)
    binding_map = v.rename_map.binding_map(canonical_params(version))
    for scenario in SCENARIOS:
        oracle = RecordingOracle()
        before = run_episode(original, scenario, CATALOG, oracle)
        steps = [as_turn(remapper.message(s.message()),
                         remapper.skill_name(s.skill) if s.skill else None)
                 for s in oracle.steps]
        after = run_episode(v.harness, scenario, CATALOG, ScriptedPolicy(steps),
                            rename_map=binding_map)
        assert tool_results(after.messages) == tool_results(before.messages)
        assert (score_episode(after, scenario, v.harness).rewards()
                == score_episode(before, scenario, original).rewards())
        assert list(after.messages) == remapper.messages(before.messages)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**63))
def test_the_oracle_under_the_variant_plays_the_remapped_trajectory(seed):
    original = HARNESSES["v1"]
    v = augment(original, random.Random(seed), ALL)
    remapper = Remapper(v, original)
    for scenario in SCENARIOS:
        before = run_episode(original, scenario, CATALOG, OraclePolicy())
        direct = run_episode(v.harness, scenario, CATALOG, OraclePolicy(),
                             rename_map=v.rename_map.binding_map())
        assert _normalised(direct.messages) == _normalised(remapper.messages(before.messages))


def _normalised(messages) -> list[dict]:
    """Messages with tool-call arguments parsed (key order is not meaning)."""
    out = []
    for m in messages:
        m = dict(m)
        if m.get("tool_calls"):
            m["tool_calls"] = [{**c, "function": {**c["function"], "arguments": json.loads(
                c["function"]["arguments"])}} for c in m["tool_calls"]]
        out.append(m)
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**63), version=st.sampled_from(VERSIONS))
def test_remapping_there_and_back_restores_the_trajectory(seed, version):
    original = HARNESSES[version]
    v = augment(original, random.Random(seed), ALL)
    there, back = Remapper(v, original), Remapper(v, original, reverse=True)
    for scenario in SCENARIOS[:5]:
        messages = list(run_episode(original, scenario, CATALOG, OraclePolicy()).messages)
        assert back.messages(there.messages(messages)) == messages


def test_tool_names_argument_keys_and_text_are_remapped(v1):
    rmap = RenameMap(tools={"product.price": ("get_price", "fetchCost")},
                     skills={"price_coupon": ("price_and_coupons", "pricing")},
                     params={"product.price": {"product_id": "itemNo"}},
                     terms={"get_price": "fetchCost", "price_and_coupons": "pricing"})
    from hat_core.hsa.rename import apply_renames
    v = Variant(apply_renames(v1, rmap), rmap, ("rename_tools",))
    r = Remapper(v)
    msg = {"role": "assistant", "content": "",
           "reasoning_content": "属于price_and_coupons，调get_price",
           "tool_calls": [{"id": "c1", "type": "function", "function": {
               "name": "get_price", "arguments": '{"product_id": "P1001"}'}}]}
    out = r.message(msg)
    assert out["reasoning_content"] == "属于pricing，调fetchCost"
    assert out["tool_calls"][0]["function"] == {"name": "fetchCost",
                                                "arguments": '{"itemNo": "P1001"}'}
    assert msg["tool_calls"][0]["function"]["name"] == "get_price"  # input untouched
    tool_msg = {"role": "tool", "tool_call_id": "c1", "content": '{"product_id": "P1001"}'}
    assert r.message(tool_msg) == tool_msg  # results are the same under any surface
    row = r.trajectory({"messages": [msg], "metadata": {"skill": "price_and_coupons"},
                        "tools": [{"type": "function", "function": {
                            "name": "get_price", "description": "见 get_price",
                            "parameters": {"properties": {"product_id": {}},
                                           "required": ["product_id"]}}}]})
    assert row["metadata"] == {"skill": "pricing"}
    fn = row["tools"][0]["function"]
    assert fn["name"] == "fetchCost" and fn["parameters"]["required"] == ["itemNo"]
    assert fn["description"] == "见 fetchCost"


def test_remap_arguments_leaves_malformed_and_unchanged_text_alone():
    assert remap_arguments('{"a": 1', {"a": "b"}) == '{"a": 1'
    assert remap_arguments('{"c":1}', {"a": "b"}) == '{"c":1}'
    assert remap_arguments('[1]', {"a": "b"}) == '[1]'
    assert remap_arguments({"a": 1}, {"a": "b"}) == {"b": 1}
    assert remap_arguments('{"a": "价"}', {"a": "b"}) == '{"b": "价"}'


def test_undeclared_skills_replay_identically_under_a_skill_reorder():
    original = HARNESSES["v3"]
    binding_map = canonical_params("v3")
    for seed in range(10):
        v = augment(original, random.Random(seed), HsaConfig().only("reorder"))
        remapper = Remapper(v, original)
        for scenario in SCENARIOS:
            oracle = RecordingOracle()
            run_episode(original, scenario, CATALOG, oracle)
            plain = [as_turn(s.message(), None) for s in oracle.steps]
            before = run_episode(original, scenario, CATALOG, ScriptedPolicy(plain))
            moved = [as_turn(remapper.message(s.message()), None) for s in oracle.steps]
            after = run_episode(v.harness, scenario, CATALOG, ScriptedPolicy(moved),
                                rename_map=v.rename_map.binding_map(binding_map))
            assert (score_episode(after, scenario, v.harness).rewards()
                    == score_episode(before, scenario, original).rewards())
