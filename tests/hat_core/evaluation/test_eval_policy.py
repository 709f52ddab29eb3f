"""`BackendPolicy`: a chat model as a simulator policy (fake backends subclass the real one)."""

from __future__ import annotations

import json

import pytest
from eval_fakes import ScriptedBackend

from hat_core.evaluation.policy import (
    INVALID_CALL,
    BackendPolicy,
    as_policy,
    assistant_turn,
    backend_of,
    chat_messages,
    mentioned_skill,
)
from hat_core.inference.protocol import AssistantOutput, ToolCall
from hat_core.sim.batch import world
from hat_core.sim.judge import verdict_of
from hat_core.sim.policy import OraclePolicy
from hat_core.sim.runner import run_episode
from hat_core.sim.scoring import score_episode


def price_scenario():
    catalog, scenarios = world(0, 15)
    return catalog, next(s for s in scenarios if s.kind == "price")


def test_tool_calls_reasoning_and_content_are_mapped(v1_harness):
    catalog, sc = price_scenario()
    price = next(p for p in catalog.products if p.id == sc.product_id).promo_price
    backend = ScriptedBackend([
        AssistantOutput("", "观众的问题属于price_and_coupons，先查价格。",
                        (ToolCall("get_price", json.dumps({"product_id": sc.product_id})),)),
        AssistantOutput(f"活动价{price:g}元，现在拍很划算～", "工具结果已齐。"),
    ])
    episode = run_episode(v1_harness, sc, catalog, BackendPolicy(backend, max_tokens=64))
    first, second = backend.requests
    assert first["max_tokens"] == 64
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert {t["function"]["name"] for t in first["tools"]} >= {"get_price"}
    call = episode.messages[2]["tool_calls"][0]
    assert call["function"] == {"name": "get_price",
                                "arguments": json.dumps({"product_id": sc.product_id})}
    assert episode.messages[2]["reasoning_content"] == "观众的问题属于price_and_coupons，先查价格。"
    assert second["messages"][-1]["role"] == "tool"  # the tool result went back to the model
    assert second["messages"][2]["tool_calls"][0]["id"] == call["id"]
    assert episode.messages[-1]["content"].startswith("活动价")
    turn = episode.turns[0]
    assert turn.skill == "price_coupon" and turn.skill_source == "declared"
    assert verdict_of(score_episode(episode, sc, v1_harness)).passed


def test_invalid_tool_calls_are_scored_as_wrong_not_crashing(v1_harness):
    catalog, sc = price_scenario()
    backend = ScriptedBackend([
        AssistantOutput("", "", (), ('{"name": "get_price", "arguments": {oops',)),
        AssistantOutput("", "", (), ("not json at all",)),
        AssistantOutput("不清楚呢"),
    ])
    episode = run_episode(v1_harness, sc, catalog, BackendPolicy(backend))
    calls = episode.turns[0].calls
    assert [c.name for c in calls] == ["get_price", INVALID_CALL]
    # v1's argument-schema hook blocks the malformed call (else: bad_arguments)
    assert calls[0].error_type in ("blocked_by_hook", "bad_arguments")
    assert calls[1].error_type == "unknown_tool" and not any(c.ok for c in calls)
    verdict = verdict_of(score_episode(episode, sc, v1_harness))
    assert not verdict.passed and verdict.failure == "wrong_tool"


def test_an_empty_answer_is_a_bad_case(v1_harness):
    catalog, sc = price_scenario()
    episode = run_episode(v1_harness, sc, catalog, BackendPolicy(ScriptedBackend([])))
    assert not verdict_of(score_episode(episode, sc, v1_harness)).passed


def test_assistant_turn_ids_are_unique_and_skill_is_optional():
    out = AssistantOutput("hi", "", (ToolCall("a", "{}"), ToolCall("b", "{}")), ("x",))
    turn = assistant_turn(out, call_prefix="call_7")
    assert [c.id for c in turn.tool_calls] == ["call_7_0", "call_7_1", "call_7_2"]
    assert turn.skill is None and turn.content == "hi"


def test_mentioned_skill_takes_the_first_and_longest():
    names = ["价格", "价格优惠", "物流查询"]
    assert mentioned_skill("先按价格优惠处理，再看物流查询", names) == "价格优惠"
    assert mentioned_skill("物流查询之后价格", names) == "物流查询"
    assert mentioned_skill("无关", names) is None


def test_skill_from_content_can_be_switched_off(v1_harness):
    catalog, sc = price_scenario()
    backend = ScriptedBackend([AssistantOutput("好的，现在拍～", "按price_and_coupons回答")])
    episode = run_episode(v1_harness, sc, catalog,
                          BackendPolicy(backend, skill_from_content=False))
    assert episode.turns[0].skill_source == "none"


def test_chat_messages_keep_only_chat_keys():
    msgs = [{"role": "tool", "tool_call_id": "c", "content": "{}", "extra": 1}]
    assert chat_messages(msgs) == [{"role": "tool", "content": "{}", "tool_call_id": "c"}]


def test_as_policy_and_backend_of():
    backend = ScriptedBackend([])
    policy = as_policy(backend, max_tokens=9)
    assert isinstance(policy, BackendPolicy) and policy.max_tokens == 9
    assert backend_of(policy) is backend and backend_of(backend) is backend
    oracle = OraclePolicy()
    assert as_policy(oracle) is oracle and backend_of(oracle) is None
    with pytest.raises(TypeError):
        as_policy(object())
