"""Rewards on hand-built trajectories, with exact expected values."""

from __future__ import annotations

import json

import pytest
from hand_built import PRICE, RESULT, UNKNOWN, scores, trajectory

from hat_core.sim.episode import count_tokens
from hat_core.sim.rewards import (
    REWARDS,
    accuracy_reward,
    cot_length_penalty_reward,
    effectiveness_reward,
    get_reward,
    skill_selection_reward,
    tool_rationality_reward,
)
from hat_core.sim.scoring import cot_penalty


@pytest.mark.parametrize(("msgs", "expected"), [
    # the good trajectory
    (trajectory(), (1.0, 1.0, 1.0, 1.0, 0.0)),
    # the fact is missing: accuracy (1 + 0) / 2
    (trajectory("活动价很划算，现在拍～"), (0.5, 1.0, 1.0, 1.0, 0.0)),
    # a price no tool gave: accuracy 0
    (trajectory("这款活动价79元，现在拍～"), (0.0, 1.0, 1.0, 1.0, 0.0)),
    # no call to action: effectiveness 0.5 + 0.25
    (trajectory("这款活动价89.9元。"), (1.0, 0.75, 1.0, 1.0, 0.0)),
    # forbidden wording: effectiveness 0
    (trajectory("全网最低价89.9元，快拍！"), (1.0, 0.0, 1.0, 1.0, 0.0)),
    # "can't answer": effectiveness 0.25 + 0.25
    (trajectory("不清楚呢，去链接看看"), (0.5, 0.5, 1.0, 1.0, 0.0)),
    # a hallucinated tool first: rationality 1 - 0.5 (not counted again as failed)
    (trajectory(calls=(("get_cost", {"product_id": "P1001"}, UNKNOWN),
                       ("get_price", {"product_id": "P1001"}, RESULT))),
     (1.0, 1.0, 0.5, 1.0, 0.0)),
    # a failed call to a known tool: rationality 0.75
    (trajectory(calls=(("get_price", {"product_id": 1001},
                        {"error": "bad_arguments", "message": "x"}),
                       ("get_price", {"product_id": "P1001"}, RESULT))),
     (1.0, 1.0, 0.75, 1.0, 0.0)),
    # the same call twice: rationality 0.75
    (trajectory(calls=(("get_price", {"product_id": "P1001"}, RESULT),) * 2),
     (1.0, 1.0, 0.75, 1.0, 0.0)),
    # an unneeded tool (allowed: coupon.list): rationality 0.75, skill from the first tool
    (trajectory(calls=(("check_stock", {"product_id": "P1001"}, {"stock": {"黑色": 3}}),
                       ("get_price", {"product_id": "P1001"}, RESULT))),
     (1.0, 1.0, 0.75, 0.0, 0.0)),
    # an optional tool is fine
    (trajectory(calls=(("get_price", {"product_id": "P1001"}, RESULT),
                       ("list_coupons", {"product_id": "P1001"}, {"coupons": []}))),
     (1.0, 1.0, 1.0, 1.0, 0.0)),
    # wrong arguments: the call does not count, the fact does
    (trajectory(calls=(("get_price", {"product_id": "P1002"}, RESULT),)),
     (0.5, 1.0, 1.0, 1.0, 0.0)),
    # no tool at all: calls 0, the price is not grounded -> 0; skill unknown 0.5
    (trajectory(calls=()), (0.0, 1.0, 1.0, 0.5, 0.0)),
    # 150 reasoning tokens: penalty 0.5
    (trajectory(reasoning="想" * 150), (1.0, 1.0, 1.0, 1.0, 0.5)),
    # a call cut off before its closing tag (a completion-length cap) is no answer: no call
    # made, no fact stated, effectiveness 0 although the text has no "can't answer" wording
    (trajectory('<tool_call>\n{"name": "get_price", "arguments": {"product_id": "P10',
                calls=()), (0.0, 0.0, 1.0, 0.5, 0.0)),
    # reasoning markup left in the reply is not an answer either
    (trajectory("<think>先查价格", calls=()), (0.0, 0.0, 1.0, 0.5, 0.0)),
])
def test_rewards_on_hand_built_trajectories(v1, msgs, expected):
    assert tuple(scores(v1, msgs).rewards().values()) == pytest.approx(expected)


def test_declared_skill_wins_over_inference(v1):
    assert scores(v1, trajectory(), ["stock_check"]).skill_selection == 0.0
    assert scores(v1, trajectory(), ["price_and_coupons"]).skill_selection == 1.0
    assert scores(v1, trajectory(), ["no_such_skill"]).skill_selection == 0.0


def test_a_missing_turn_scores_zero(v1):
    msgs = trajectory()[:2]
    s = scores(v1, msgs)
    assert (s.accuracy, s.effectiveness, s.tool_rationality) == (0.0, 0.0, 1.0)


@pytest.mark.parametrize(("tokens", "penalty"), [(0, 0.0), (100, 0.0), (101, 0.01),
                                                  (150, 0.5), (200, 1.0), (999, 1.0)])
def test_cot_penalty_is_zero_to_100_then_linear_to_200(tokens, penalty):
    assert cot_penalty(tokens) == pytest.approx(penalty)


def test_count_tokens_counts_cjk_characters_and_words():
    assert count_tokens("先查价格 then calc") == 6
    assert count_tokens("") == 0
    assert count_tokens("price=89.9 ok") == 2


def test_trl_signature_from_prompt_and_completion(v1):
    msgs = trajectory(reasoning="想" * 150)
    kwargs = {"scenario": [PRICE.to_dict()], "harness": [v1.model_dump(mode="json")]}
    prompts, completions = [msgs[:2]], [msgs[2:]]
    assert accuracy_reward(prompts, completions, None, **kwargs) == [1.0]
    assert effectiveness_reward(prompts, completions, **kwargs) == [1.0]
    assert tool_rationality_reward(prompts, completions, **kwargs) == [1.0]
    assert skill_selection_reward(prompts, completions, **kwargs) == [1.0]
    assert cot_length_penalty_reward(prompts, completions, **kwargs) == [-0.5]


def test_trl_signature_with_json_columns_and_a_trajectory(v1):
    good, bad = trajectory(), trajectory("这款活动价79元，现在拍～")
    kwargs = {"scenario": [json.dumps(PRICE.to_dict(), ensure_ascii=False)] * 2,
              "harness": [v1.canonical_json()] * 2,
              "trajectory": [json.dumps(good, ensure_ascii=False), {"messages": bad}]}
    assert accuracy_reward(["p", "p"], ["c", "c"], **kwargs) == [1.0, 0.0]


def test_a_plain_text_completion_is_scored(v1):
    kwargs = {"scenario": [PRICE.to_dict()], "harness": [v1]}
    assert effectiveness_reward(["P1001 这个多少钱？"], ["活动价很划算，快拍～"],
                                **kwargs) == [1.0]
    assert accuracy_reward(["P1001 这个多少钱？"], ["活动价很划算，快拍～"], **kwargs) == [0.0]


def test_registry_and_missing_columns(v1):
    assert set(REWARDS) == {"accuracy", "effectiveness", "tool_rationality",
                            "skill_selection", "cot_length_penalty"}
    assert get_reward("accuracy") is accuracy_reward
    with pytest.raises(KeyError, match="valid: accuracy"):
        get_reward("speed")
    with pytest.raises(ValueError, match="'scenario'"):
        accuracy_reward(["p"], ["c"], harness=[v1])
