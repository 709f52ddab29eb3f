"""The judge gate on the store (`judge_decision`), on both backends: refused with too few or
disagreeing labels, passed with enough agreeing bad-case labels or closed pairwise votes, an
override recorded in the audit log, and the rule judge never measured."""

from __future__ import annotations

import pytest
from store_helpers import variant

from db.audit_repo import list_audit
from db.badcases_repo import add_bad_case, label_bad_case
from db.calibration_repo import judge_decision
from db.engine import in_transaction
from db.harness_repo import submit_harness
from db.pairwise_repo import (
    cast_vote,
    close_pairwise_review,
    create_pairwise_review,
    list_blind_items,
)
from hat_core.evaluation.errors import JudgeGateError
from hat_core.evaluation.judging import JudgeConfig, require_allowed
from hat_core.evidence.review_items import ReviewItem

LLM = JudgeConfig(kind="llm", base_url="http://judge.invalid/v1", model="judge-7b")
LABELS = ["wrong_tool", "hallucinated_fact", "compliance_breach", "no_answer"]


def label_cases(sessions, pairs: list[tuple[str, str]]) -> None:
    """Store a bad case per (judge failure type, human label) and review it."""
    def fill(s):
        version = submit_harness(s, harness=variant(1), author="a")
        for judge, human in pairs:
            case = add_bad_case(s, episode={}, harness_version_id=version.id,
                                failure_type=judge)
            label_bad_case(s, bad_case_id=case.id, reviewer="rita", label=human,
                           review_state="dismissed" if human == "pass" else "confirmed")
    in_transaction(sessions, fill)


def decide(sessions, config=LLM, min_n=12, override=None):
    return in_transaction(sessions, lambda s: judge_decision(
        s, config=config, min_kappa=0.6, min_n=min_n, override=override, actor="olga"))


def test_refused_without_enough_labels_then_passed(sessions):
    empty = decide(sessions)
    assert not empty.allowed and empty.n == 0 and empty.kappa is None
    label_cases(sessions, [(x, x) for x in LABELS] * 2)  # 8 agreeing labels
    few = decide(sessions)
    with pytest.raises(JudgeGateError, match=r"only 8 calibration items \(need 12\)"):
        require_allowed(few)
    label_cases(sessions, [(x, x) for x in LABELS])  # 12
    ok = decide(sessions)
    assert ok.allowed and ok.passed and (ok.n, ok.kappa) == (12, pytest.approx(1.0))
    with sessions() as s:
        assert list_audit(s, entity="judge_gate") == []


def test_refused_when_the_judge_disagrees_and_an_override_is_audited(sessions):
    # 12 pairs, 6 agree: wrong_tool flagged where humans saw other failures
    label_cases(sessions, [(x, x) for x in LABELS] + [("wrong_tool", "pass")] * 2
                + [("wrong_tool", x) for x in LABELS[1:]] + [(x, x) for x in LABELS[1:]])
    low = decide(sessions)
    assert not low.allowed and low.n == 12 and low.kappa < 0.6
    assert f"kappa {low.kappa:.3f} < 0.6 on 12 items" in low.reason
    assert f"kappa {low.kappa:.3f}, n 12" in low.refusal()
    with sessions() as s:
        assert list_audit(s, entity="judge_gate") == []  # a refusal stores nothing
    forced = decide(sessions, override="pilot run, labels pending")
    assert forced.allowed and not forced.passed
    with sessions() as s:
        (entry,) = list_audit(s, entity="judge_gate")
    assert (entry.action, entry.actor, entry.entity_id) == ("judge_gate.override", "olga",
                                                           "llm:judge-7b")
    assert entry.after["override"] == "pilot run, labels pending"
    assert entry.after["kappa"] == pytest.approx(low.kappa)


def test_closed_pairwise_votes_can_calibrate_the_judge(sessions):
    items = [ReviewItem(scenario_id=f"s{i}", prompt="", response_a=f"answer A{i}",
                        response_b=f"answer B{i}", judge="a" if i % 2 else "b")
             for i in range(6)]

    def run(s):
        review = create_pairwise_review(s, title="t", system_a="x", system_b="y", items=items,
                                        actor="olga", seed=3)
        for item in list_blind_items(s, review_id=review.id):
            a_left = item.response_left.startswith("answer A")
            wants_a = int(item.scenario_id[1:]) % 2 == 1  # the reviewer agrees with the judge
            cast_vote(s, item_id=item.id, reviewer="rita",
                      choice="left" if wants_a == a_left else "right")
        return review

    review = in_transaction(sessions, run)
    pairwise = JudgeConfig(kind="llm", base_url="http://j/v1", model="m", source="pairwise")
    assert not decide(sessions, pairwise, min_n=6).allowed  # still open: blind, no pairs
    in_transaction(sessions, lambda s: close_pairwise_review(s, review_id=review.id, actor="o"))
    ok = decide(sessions, pairwise, min_n=6)
    assert ok.allowed and ok.n == 6 and ok.source == "pairwise"


def test_the_rule_judge_is_never_measured(sessions):
    decision = decide(sessions, JudgeConfig(), min_n=10_000)
    assert decision.allowed and decision.judge == "rule" and decision.n == 0
