"""The judge: failure types, the LLM judge over an OpenAI-compatible endpoint, calibration."""

from __future__ import annotations

import json

import httpx
import pytest
from hand_built import RESULT, UNKNOWN, scores, trajectory

from hat_core.sim.batch import world
from hat_core.sim.judge import (
    FAILURE_TYPES,
    LLMJudge,
    RuleJudge,
    calibrate,
    parse_verdict,
    verdict_of,
)
from hat_core.sim.policy import OraclePolicy
from hat_core.sim.runner import run_episode


@pytest.mark.parametrize(("msgs", "declared", "failure"), [
    (trajectory(), (), None),
    (trajectory(calls=(("check_stock", {"product_id": "P1001"}, {"stock": {}}),
                       ("get_price", {"product_id": "P1001"}, RESULT))), (), "wrong_tool"),
    (trajectory(calls=(("get_cost", {}, UNKNOWN),)), (), "wrong_tool"),
    (trajectory(calls=(("get_price", {"product_id": "P1002"}, RESULT),)), (),
     "wrong_arguments"),
    (trajectory("这款活动价79元，现在拍～"), (), "hallucinated_fact"),
    (trajectory("活动价很划算，现在拍～"), (), "hallucinated_fact"),
    (trajectory("全网最低价89.9元，快拍！"), (), "compliance_breach"),
    (trajectory(), ("stock_check",), "wrong_skill"),
    (trajectory(reasoning="想" * 101), (), "over_long_reasoning"),
    (trajectory(""), (), "no_answer"),
])
def test_failure_types(v1, msgs, declared, failure):
    verdict = verdict_of(scores(v1, msgs, declared))
    assert verdict.failure == failure
    assert verdict.passed == (failure is None)
    assert verdict.label == (failure or "pass")


def test_every_failure_is_listed_in_priority_order(v1):
    msgs = trajectory("全网最低价79元", reasoning="想" * 300)
    verdict = verdict_of(scores(v1, msgs))
    assert verdict.failures == ("hallucinated_fact", "compliance_breach",
                                "over_long_reasoning")
    assert verdict.reason == "turn 0: hallucinated_fact: promo_price, 79.0"


def test_rule_judge_passes_the_oracle(v1):
    catalog, scenarios = world(2, 15)
    judge = RuleJudge()
    for s in scenarios:
        assert judge.judge(run_episode(v1, s, catalog, OraclePolicy()), s, v1).passed


def _endpoint(answer: str, seen: list):
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"choices": [{"message": {"content": answer}}]})
    return httpx.Client(transport=httpx.MockTransport(handler))


def test_llm_judge_over_an_openai_compatible_endpoint(v1):
    catalog, scenarios = world(2, 1)
    ep = run_episode(v1, scenarios[0], catalog, OraclePolicy())
    seen: list[httpx.Request] = []
    judge = LLMJudge("http://judge.local/v1/", "judge-model", api_key="k",
                     client=_endpoint('好的：{"verdict": "wrong_tool", "reason": "x"}', seen))
    verdict = judge.judge(ep, scenarios[0], v1)
    assert (verdict.passed, verdict.failure, verdict.reason) == (False, "wrong_tool", "x")
    assert str(seen[0].url) == "http://judge.local/v1/chat/completions"
    assert seen[0].headers["authorization"] == "Bearer k"
    body = json.loads(seen[0].content)
    assert body["model"] == "judge-model" and body["temperature"] == 0


def test_llm_judge_failures_are_values(v1):
    catalog, scenarios = world(2, 1)
    ep = run_episode(v1, scenarios[0], catalog, OraclePolicy())

    def down(request):
        raise httpx.ConnectError("refused", request=request)
    judge = LLMJudge("http://judge.local/v1", "m",
                     client=httpx.Client(transport=httpx.MockTransport(down)))
    verdict = judge.judge(ep, scenarios[0], v1)
    assert not verdict.passed and verdict.failure is None
    assert verdict.error.startswith("judge endpoint failed")


@pytest.mark.parametrize(("text", "label"), [
    ('{"verdict": "pass"}', "pass"),
    ('```json\n{"verdict": "no_answer", "reason": "空"}\n```', "no_answer"),
    ('{"verdict": "great"}', "error"),
    ("no json", "error"),
])
def test_parse_verdict(text, label):
    assert parse_verdict(text).label == label


def test_calibration_against_a_hand_computed_kappa():
    human = ["pass", "pass", "wrong_tool", "wrong_tool"]
    judge = ["pass", "wrong_tool", "wrong_tool", "wrong_tool"]
    # p_o = 3/4; p_e = (2/4)(1/4) + (2/4)(3/4) = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2
    cal = calibrate(judge, human)
    assert cal.accuracy == 0.75
    assert cal.kappa == pytest.approx(0.5)
    assert cal.labels == ("pass", "wrong_tool")
    assert cal.confusion == ((1, 1), (0, 2))  # rows: human, columns: judge


def test_calibration_edge_cases():
    assert calibrate(["pass"] * 3, ["pass"] * 3).kappa == 1.0
    with pytest.raises(ValueError):
        calibrate(["pass"], [])
    full = calibrate(["pass"], ["pass"], labels=("pass", *FAILURE_TYPES))
    assert len(full.confusion) == 8
