"""Judge calibration through the store: kappa from bad-case labels and closed pairwise votes
against values computed by hand, and the gate at the threshold, on both backends."""

from __future__ import annotations

import pytest
from store_helpers import variant

from db.badcases_repo import add_bad_case, label_bad_case
from db.calibration_repo import badcase_label_pairs, judge_calibration, label_pairs
from db.engine import in_transaction
from db.errors import StoreError
from db.harness_repo import submit_harness
from db.pairwise_repo import (
    cast_vote,
    close_pairwise_review,
    create_pairwise_review,
    list_blind_items,
)
from hat_core.evidence.review_items import ReviewItem

# (judge failure type, human label); None: not reviewed (left out of the calibration)
BAD_CASES = [("wrong_tool", "wrong_tool")] * 3 + [("wrong_tool", "pass")] + \
    [("hallucinated_fact", "hallucinated_fact")] * 3 + [("hallucinated_fact", "wrong_tool")] + \
    [("compliance_breach", "compliance_breach"), ("compliance_breach", "pass"),
     ("wrong_tool", None), ("compliance_breach", None)]


@pytest.fixture
def labelled(sessions):
    def fill(s):
        version = submit_harness(s, harness=variant(1), author="a")
        for judge, human in BAD_CASES:
            case = add_bad_case(s, episode={}, harness_version_id=version.id,
                                failure_type=judge)
            if human is not None:
                state = "dismissed" if human == "pass" else "confirmed"
                label_bad_case(s, bad_case_id=case.id, review_state=state, reviewer="rita",
                               label=human)

    in_transaction(sessions, fill)


def test_badcase_kappa_matches_the_hand_computation(sessions, labelled):
    # n = 10, agreement 7/10. Human: pass 2, wrong_tool 4, hallucinated 3, compliance 1;
    # judge: pass 0, wrong_tool 4, hallucinated 4, compliance 2.
    # p_e = (2*0 + 4*4 + 3*4 + 1*2) / 100 = 0.30; kappa = (0.7 - 0.3) / 0.7 = 4/7.
    with sessions() as s:
        assert len(badcase_label_pairs(s)) == 10
        result = judge_calibration(s, source="bad_cases", min_kappa=0.5, min_n=10)
    assert result.n == 10 and result.calibration.accuracy == pytest.approx(0.7)
    assert result.calibration.kappa == pytest.approx(4 / 7)
    per = {a.label: a for a in result.agreement}
    # wrong_tool one-vs-rest [[3, 1], [1, 5]]: p_o 0.8, p_e 0.16 + 0.36; kappa 0.28/0.48
    assert per["wrong_tool"].kappa == pytest.approx(7 / 12)
    assert (per["wrong_tool"].recall, per["wrong_tool"].precision) == (0.75, 0.75)
    # compliance_breach [[1, 0], [1, 8]]: p_o 0.9, p_e 0.02 + 0.72; kappa 0.16/0.26
    assert per["compliance_breach"].kappa == pytest.approx(8 / 13)
    assert per["pass"].n_judge == 0 and per["pass"].n_human == 2
    assert result.gate_ok and "0.571 >= 0.5" in result.gate_reason


def test_the_gate_refuses_a_judge_under_the_threshold(sessions, labelled):
    with sessions() as s:
        low = judge_calibration(s, source="bad_cases", min_kappa=0.6, min_n=10)
        few = judge_calibration(s, source="bad_cases", min_kappa=0.5, min_n=11)
    assert not low.gate_ok and "kappa 0.571 < 0.6 on 10 items" in low.gate_reason
    assert not few.gate_ok and "only 10 calibration items (need 11)" in few.gate_reason


def test_pairwise_kappa_matches_the_hand_computation(sessions):
    judges = ["a", "a", "b", "tie", "b", "tie"]
    humans = ["a", "a", "b", "a", "a", "tie"]  # the system the reviewer preferred
    items = [ReviewItem(f"s{i}", "", f"answer A{i}", f"answer B{i}", judge=j)
             for i, j in enumerate(judges)]

    def run(s):
        review = create_pairwise_review(s, title="t", system_a="x", system_b="y", items=items,
                                        actor="olga", seed=11)
        for item, human in zip(list_blind_items(s, review_id=review.id), humans, strict=True):
            a_left = item.response_left.startswith("answer A")
            choice = "tie" if human == "tie" else (
                "left" if (human == "a") == a_left else "right")
            cast_vote(s, item_id=item.id, reviewer="rita", choice=choice)
        return review

    review = in_transaction(sessions, run)
    with sessions() as s:
        assert judge_calibration(s, source="pairwise").n == 0  # still open: nothing
    in_transaction(sessions, lambda s: close_pairwise_review(s, review_id=review.id, actor="o"))
    # agreement 4/6; human a 4, b 1, tie 1; judge 2/2/2: p_e = (8 + 2 + 2)/36 = 1/3;
    # kappa = (2/3 - 1/3) / (2/3) = 0.5
    with sessions() as s:
        result = judge_calibration(s, source="pairwise", min_kappa=0.6, min_n=5)
    assert result.calibration.accuracy == pytest.approx(4 / 6)
    assert result.calibration.kappa == pytest.approx(0.5)
    assert not result.gate_ok and "kappa 0.500 < 0.6" in result.gate_reason


def test_empty_and_unknown_sources(sessions):
    with sessions() as s:
        empty = judge_calibration(s, source="bad_cases")
        with pytest.raises(StoreError, match="valid: bad_cases, pairwise"):
            label_pairs(s, source="llm")
    assert empty.calibration is None and not empty.gate_ok and "no bad_cases" in empty.gate_reason
