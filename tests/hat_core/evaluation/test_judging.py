"""The judge of the simulator suites: config validation, the gate's decision, and `evaluate`
scoring with the chosen judge (the rule judge by default, an LLM judge only through the gate).
The LLM judge is `AnsweringJudge`, a subclass of the real `LLMJudge` without the network."""

from __future__ import annotations

import pytest
from eval_fakes import AnsweringJudge

from hat_core.errors import ConfigError
from hat_core.evaluation.errors import JudgeGateError
from hat_core.evaluation.evaluate import EvalOptions, evaluate
from hat_core.evaluation.judging import (
    JudgeConfig,
    check_judge_config,
    gate_decision,
    make_judge,
    require_allowed,
    rule_decision,
)
from hat_core.sim.judge import LLMJudge, calibrate
from hat_core.sim.policy import OraclePolicy

LLM = JudgeConfig(kind="llm", base_url="http://judge.invalid/v1", model="fake-judge")
LABELS = ["pass", "wrong_tool", "no_answer"] * 4
AGREEING = calibrate(LABELS, LABELS)
OPTIONS = EvalOptions(episodes=4, variants=1, robustness_variants=1)


def test_config_errors_list_the_valid_options():
    with pytest.raises(ConfigError) as exc:
        check_judge_config(JudgeConfig(kind="gpt"))
    assert "valid: rule, llm" in exc.value.report()
    with pytest.raises(ConfigError) as exc:
        check_judge_config(JudgeConfig(kind="llm", source="votes"))
    report = exc.value.report()
    assert "needs base_url and model" in report and "valid: bad_cases, pairwise" in report
    assert make_judge(JudgeConfig()) is None
    judge = make_judge(LLM)
    assert isinstance(judge, LLMJudge) and judge.model == "fake-judge"


def test_the_gate_decision_says_kappa_n_thresholds_and_the_fix():
    few = gate_decision(LLM, AGREEING, min_kappa=0.6, min_n=100)
    assert not few.allowed and few.n == 12 and few.kappa == pytest.approx(1.0)
    with pytest.raises(JudgeGateError) as exc:
        require_allowed(few)
    message = str(exc.value)
    for part in ("only 12 calibration items (need 100)", "kappa 1.000, n 12",
                 "kappa >= 0.6 on n >= 100", "HAT_JUDGE_MIN_KAPPA", "label more bad cases",
                 "--judge rule", "Nothing was evaluated"):
        assert part in message
    none = gate_decision(LLM, None, min_kappa=0.6, min_n=10)
    assert not none.allowed and "kappa none, n 0" in none.refusal()
    ok = gate_decision(LLM, AGREEING, min_kappa=0.6, min_n=10)
    assert ok.allowed and ok.params()["judge.gate"] == "pass"
    assert ok.params()["judge.kappa"] == "1.0000" and ok.params()["judge.n"] == "12"
    overridden = gate_decision(LLM, AGREEING, min_kappa=0.6, min_n=100, override=" pilot ")
    assert overridden.allowed and not overridden.passed
    assert overridden.params()["judge.override"] == "pilot"
    assert rule_decision().params()["judge.gate"] == "n/a"


def test_rule_judge_is_the_default_and_unchanged(v1_harness):
    plain = evaluate(OraclePolicy(), v1_harness, ["t1", "t2"], OPTIONS)
    explicit = evaluate(OraclePolicy(), v1_harness, ["t1", "t2"], OPTIONS, gate=rule_decision())
    assert plain.to_dict()["suites"] == explicit.to_dict()["suites"]
    assert "judge" not in plain.to_dict()
    assert [r.metrics["pass_rate"] for r in plain.suites] == [1.0, 1.0]


def test_an_llm_judge_scores_the_cases_only_with_an_allowing_gate(v1_harness):
    judge = AnsweringJudge("http://judge.invalid/v1", "fake-judge")
    options = EvalOptions(episodes=4, variants=1, robustness_variants=1, judge=LLM)
    for gate in (None, rule_decision(), gate_decision(LLM, AGREEING, min_kappa=0.6, min_n=100)):
        with pytest.raises(JudgeGateError):
            evaluate(OraclePolicy(), v1_harness, ["t1"], options, judge=judge, gate=gate)
    assert judge.calls == 0
    gate = gate_decision(LLM, AGREEING, min_kappa=0.6, min_n=10)
    report = evaluate(OraclePolicy(), v1_harness, ["t1", "t2", "tool_robustness", "cot_length"],
                      options, judge=judge, gate=gate)
    metrics = {r.suite: r.metrics for r in report.suites}
    # the oracle passes every case for the rule judge; this judge flags every case
    assert metrics["t1"]["pass_rate"] == metrics["t2"]["pass_rate"] == 0.0
    assert metrics["tool_robustness"]["score"] == 0.0
    assert judge.calls == 4 + 4 + 4 * 4  # t1 (shared with cot_length), t2, four families
    assert report.to_dict()["judge"]["kappa"] == 1.0 and report.to_dict()["judge"]["passed"]
    t1 = report.suites[0].rows[0]
    assert t1["failure_type"] == "wrong_tool" and "fake judge" in t1["reason"]
