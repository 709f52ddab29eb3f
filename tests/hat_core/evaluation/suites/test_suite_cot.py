"""`cot_length`: reasoning tokens of tool-call and reply turns on known trajectories."""

from __future__ import annotations

from hat_core.evaluation.suites.cot import CotLengthSuite, cot_lengths, turn_tokens
from hat_core.sim.episode import count_tokens
from hat_core.sim.policy import OraclePolicy


def call(reasoning: str) -> dict:
    return {"role": "assistant", "content": "", "reasoning_content": reasoning,
            "tool_calls": [{"id": "c", "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}]}


def reply(reasoning: str | None) -> dict:
    msg = {"role": "assistant", "content": "好的"}
    return msg | ({"reasoning_content": reasoning} if reasoning is not None else {})


def words(n: int) -> str:
    return " ".join(["w"] * n)


def test_percentiles_on_known_trajectories():
    trajectories = [
        [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
         call(words(10)), {"role": "tool", "tool_call_id": "c", "content": "{}"},
         call(words(20)), reply(words(5))],
        [{"role": "user", "content": "u"}, call(words(30)), reply("先查价格 then calc")],
        [{"role": "user", "content": "u"}, call(words(40)), reply(None)],
    ]
    stats = cot_lengths(trajectories)
    assert stats.tool_call.count == 4 and stats.reply.count == 3
    assert stats.tool_call.mean == 25 and stats.tool_call.p50 == 20 and stats.tool_call.p95 == 40
    assert stats.reply.mean == (5 + 6 + 0) / 3 and stats.reply.p50 == 5 and stats.reply.p95 == 6
    assert stats.metrics() == {"tool_call_mean": 25.0, "tool_call_p50": 20.0,
                               "tool_call_p95": 40.0, "reply_mean": 11 / 3,
                               "reply_p50": 5.0, "reply_p95": 6.0}


def test_twenty_values_p95_is_the_19th():
    trajectory = [call(words(n)) for n in range(1, 21)]
    stats = cot_lengths([trajectory])
    assert stats.tool_call.p95 == 19 and stats.tool_call.p50 == 10
    assert stats.reply.count == 0 and stats.metrics()["reply_mean"] == 0.0


def test_turn_tokens_skips_other_roles():
    assert turn_tokens([{"role": "user", "content": "x y"}, reply("a b")]) == ([], [2])


def test_the_suite_on_the_oracle(v1_harness):
    r = CotLengthSuite().run(OraclePolicy(), v1_harness, episodes=15)
    assert r.summary["episodes"] == 15 and len(r.rows) == 15
    assert 0 < r.metrics["tool_call_p50"] <= r.metrics["tool_call_p95"] < 100
    assert 0 < r.metrics["reply_p50"] <= r.metrics["reply_p95"] < 100
    one = r.rows[0]
    assert all(isinstance(n, int) for n in one["tool_call_tokens"] + one["reply_tokens"])
    assert count_tokens("先查价格 then calc") == 6
