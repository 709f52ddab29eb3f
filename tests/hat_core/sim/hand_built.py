"""Hand-built trajectories of one price question, for the reward and judge tests."""

from __future__ import annotations

import json

from hat_core.sim.binding import bind
from hat_core.sim.episode import episode_from_messages
from hat_core.sim.scenarios import ExpectedCall, Fact, Scenario, TurnTruth
from hat_core.sim.scoring import score_episode

PRICE = Scenario("hand-price", "price", "P1001", (TurnTruth(
    "P1001 这个多少钱？", "price_coupon", "answer",
    (ExpectedCall("product.price", {"product_id": "P1001"}),), ("coupon.list",),
    (Fact("promo_price", ("89.9",)),), cta=True),))
RESULT = {"product_id": "P1001", "price": 129.0, "promo_price": 89.9}
GOOD_REPLY = "这款原价129元，直播间活动价89.9元，现在拍很划算～"


def _call(i: int, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": "", "tool_calls": [{
        "id": f"c{i}", "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}]}


def _result(i: int, content: dict) -> dict:
    return {"role": "tool", "tool_call_id": f"c{i}",
            "content": json.dumps(content, ensure_ascii=False)}


def trajectory(reply: str = GOOD_REPLY, calls=(("get_price", {"product_id": "P1001"},
                                                RESULT),), reasoning: str = "") -> list[dict]:
    msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": "P1001 这个多少钱？"}]
    for i, (name, args, result) in enumerate(calls):
        msgs += [_call(i, name, args), _result(i, result)]
    final = {"role": "assistant", "content": reply}
    if reasoning:
        final["reasoning_content"] = reasoning
    return msgs + [final]


def scores(v1, msgs, declared=()):
    ep = episode_from_messages(msgs, bind(v1), scenario_id=PRICE.id, declared_skills=declared)
    return score_episode(ep, PRICE, v1)


UNKNOWN = {"error": "unknown_tool", "message": "没有这个工具"}
