"""Bad cases: filters, keyset pagination, labelling with an audit trail."""

from __future__ import annotations

import pytest
from store_helpers import variant

from db.audit_repo import list_audit
from db.badcases_repo import (
    BadCaseFilter,
    add_bad_case,
    count_bad_cases,
    get_bad_case,
    label_bad_case,
    list_bad_cases,
)
from db.engine import in_transaction
from db.errors import StoreError
from db.harness_repo import submit_harness
from db.release_repo import register_model_version

TYPES = ("wrong_tool", "hallucinated_price", "compliance")


@pytest.fixture
def filled(sessions):
    def fill(s):
        v1 = submit_harness(s, harness=variant(1), author="a")
        v2 = submit_harness(s, harness=variant(2), author="a")
        model = register_model_version(s, registry_name="avatar", version="1")
        ids = [
            add_bad_case(
                s, episode={"turns": [{"role": "user", "content": f"q{i}"}]},
                harness_version_id=(v1 if i % 2 else v2).id, failure_type=TYPES[i % 3],
                model_version_id=model.id if i < 6 else None, judge_scores={"accuracy": 0.1 * i},
            ).id
            for i in range(12)
        ]
        return v1, v2, model, ids

    return in_transaction(sessions, fill)


def test_add_and_get(sessions, filled):
    _, _, _, ids = filled
    with sessions() as s:
        case = get_bad_case(s, bad_case_id=ids[3])
    assert case.episode["turns"][0]["content"] == "q3" and case.review_state == "new"
    assert case.judge_scores == {"accuracy": pytest.approx(0.3)} and not case.send_to_training


def test_filters(sessions, filled):
    v1, _, model, ids = filled
    with sessions() as s:
        by_type = list_bad_cases(s, where=BadCaseFilter(failure_type="wrong_tool"))
        by_version = list_bad_cases(s, where=BadCaseFilter(harness_version_id=v1.id))
        by_model = list_bad_cases(s, where=BadCaseFilter(model_version_id=model.id))
        assert count_bad_cases(s, where=BadCaseFilter(review_state="new")) == 12
    assert [c.id for c in by_type] == [ids[9], ids[6], ids[3], ids[0]]
    assert {c.harness_version_id for c in by_version} == {v1.id} and len(by_version) == 6
    assert len(by_model) == 6


def test_keyset_pagination_visits_every_match_once(sessions, filled):
    where = BadCaseFilter(review_state="new")
    seen, after = [], None
    with sessions() as s:
        while page := list_bad_cases(s, where=where, after_id=after, limit=5):
            seen += [c.id for c in page]
            after = page[-1].id
    assert seen == sorted(filled[3], reverse=True)


def test_label_records_review_and_audit(sessions, filled):
    case_id = filled[3][0]
    labelled = in_transaction(sessions, lambda s: label_bad_case(
        s, bad_case_id=case_id, review_state="confirmed", reviewer="rita",
        label="wrong_tool", comment="used search, not info", send_to_training=True,
    ))
    assert (labelled.review_state, labelled.reviewer, labelled.send_to_training) == (
        "confirmed", "rita", True)
    assert labelled.reviewed_at is not None
    with sessions() as s:
        where = BadCaseFilter(review_state="confirmed", failure_type="wrong_tool")
        assert [c.id for c in list_bad_cases(s, where=where)] == [case_id]
        (entry,) = list_audit(s, entity="bad_case", entity_id=case_id)[:1]
    assert entry.before["review_state"] == "new" and entry.after["comment"].startswith("used")


def test_label_refuses_unknown_state(sessions, filled):
    with pytest.raises(StoreError, match="valid: new"):
        in_transaction(sessions, lambda s: label_bad_case(
            s, bad_case_id=filled[3][0], review_state="meh", reviewer="rita"))
