"""One gate's paired evidence (`hat_core.release.evidence`): which per-case outcome a metric
reads, IFEval rows keyed by prompt, and the verdict rule on hand-made numbers."""

from __future__ import annotations

import pytest

from hat_core.evaluation.errors import EvalInputError
from hat_core.release.evidence import case_outcomes, decide, outcome_of, paired_evidence, rate

LIMITS = {"tolerance": 0.02, "min_cases": 30, "alpha": 0.05}


def test_each_metric_names_its_per_case_outcome():
    assert outcome_of("t1.accuracy").field == "passed"
    bad = outcome_of("t2.bad_case_rate")
    assert (bad.suite, bad.field, bad.inverse) == ("t2", "passed", True)
    assert outcome_of("ifeval.ife_p").field == "strict"
    assert outcome_of("t1.first_call_exact").field == "first_call_exact"
    with pytest.raises(ValueError, match="METRIC one of accuracy, pass_rate"):
        outcome_of("t1.mean_accuracy")


def test_ifeval_rows_are_paired_by_prompt_key_and_rates_follow_the_direction():
    rows = [{"suite": "ifeval", "key": 7, "strict": True},
            {"suite": "ifeval", "key": 9, "strict": False},
            {"suite": "t1", "case_id": "t1/a", "passed": False}]
    assert case_outcomes(rows, outcome_of("ifeval.ife_p")) == [
        {"case_id": "ifeval/7", "passed": True}, {"case_id": "ifeval/9", "passed": False}]
    assert rate(rows, outcome_of("t1.accuracy")) == 0.0
    assert rate(rows, outcome_of("t1.bad_case_rate")) == 1.0
    assert rate(rows, outcome_of("t2.accuracy")) is None
    with pytest.raises(EvalInputError, match="has no 'passed'"):
        rate(rows, outcome_of("ifeval.accuracy"))


@pytest.mark.parametrize(("n", "discordant", "gain", "p", "verdict", "why"), [
    (29, 20, 0.5, 0.001, "inconclusive", "too few cases: 29 < min_cases 30"),
    (40, 0, 0.0, 1.0, "inconclusive", "0 cases against 0 tell them apart"),
    (40, 6, 0.0, 1.0, "inconclusive", "p >= alpha 0.05"),      # 3 against 3
    (40, 8, 0.1, 0.05, "inconclusive", "p >= alpha 0.05"),     # p at alpha is not enough
    (40, 8, 0.1, 0.049, "passed", "significantly better"),
    (400, 8, -0.02, 0.01, "passed", "within the tolerance 0.02"),
    (400, 12, -0.03, 0.01, "failed", "significantly worse by 0.030"),
])
def test_the_verdict_rule(n, discordant, gain, p, verdict, why):
    got, reason = decide(n=n, discordant=discordant, gain=gain, p_value=p, **LIMITS)
    assert got == verdict and why in reason


def test_zero_against_zero_is_inconclusive_with_its_evidence():
    rows = [{"suite": "t1", "case_id": f"t1/{i}", "passed": False} for i in range(50)]
    ev = paired_evidence(rows, rows, outcome_of("t1.accuracy"), **LIMITS)
    assert ev.verdict == "inconclusive"
    assert (ev.n, ev.candidate, ev.reference, ev.p_value) == (50, 0.0, 0.0, 1.0)
    assert ev.to_dict()["diff_interval"] == [0.0, 0.0]
