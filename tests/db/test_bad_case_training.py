"""Bad cases a data build takes: which ones (sent, reviewed, not `pass`, this version or an
earlier one of the line, unconsumed) and the record of the build that consumed them."""

from __future__ import annotations

import pytest
from store_helpers import variant

from db.audit_repo import list_audit
from db.badcases_repo import (
    add_bad_case,
    get_bad_case,
    label_bad_case,
    mark_consumed,
    training_cases,
)
from db.engine import in_transaction
from db.harness_repo import submit_harness
from db.jobs_repo import create_job

REVIEWS = {  # name -> (version, review_state, label, send_to_training)
    "v1_sent": ("v1", "confirmed", "wrong_tool", True),
    "v2_sent": ("v2", "fixed", "hallucinated_price", True),
    "v2_kept_back": ("v2", "confirmed", "wrong_tool", False),
    "v2_pass": ("v2", "dismissed", "pass", True),
    "v2_unreviewed": ("v2", "new", "", True),
    "v3_sent": ("v3", "confirmed", "wrong_tool", True),
    "other_line": ("o1", "confirmed", "wrong_tool", True),
}


@pytest.fixture
def store(sessions):
    def fill(s):
        versions = {"v1": submit_harness(s, harness=variant(1), author="a"),
                    "v2": submit_harness(s, harness=variant(2), author="a"),
                    "v3": submit_harness(s, harness=variant(3), author="a"),
                    "o1": submit_harness(s, harness=variant(4, line="other"), author="a")}
        ids = {}
        for name, (version, state, label, sent) in REVIEWS.items():
            case = add_bad_case(s, episode={"scenario": {"id": name}},
                                harness_version_id=versions[version].id,
                                failure_type="wrong_tool")
            label_bad_case(s, bad_case_id=case.id, review_state=state, reviewer="rita",
                           label=label, send_to_training=sent)
            ids[name] = case.id
        job = create_job(s, harness_version_id=versions["v2"].id, trigger="harness_change")
        return versions, ids, job.id

    return in_transaction(sessions, fill)


def names(cases, ids) -> set[str]:
    by_id = {v: k for k, v in ids.items()}
    return {by_id[c.id] for c in cases}


def test_a_build_takes_sent_reviewed_cases_of_its_version_and_earlier_ones(sessions, store):
    versions, ids, _ = store
    with sessions() as s:
        for_v2 = training_cases(s, harness_version_id=versions["v2"].id)
        for_v1 = training_cases(s, harness_version_id=versions["v1"].id)
        for_other = training_cases(s, harness_version_id=versions["o1"].id)
    assert names(for_v2, ids) == {"v1_sent", "v2_sent"}
    assert [c.id for c in for_v2] == sorted(c.id for c in for_v2)
    assert names(for_v1, ids) == {"v1_sent"} and names(for_other, ids) == {"other_line"}


def test_a_consumed_case_is_not_read_again_except_by_its_own_job(sessions, store):
    versions, ids, job_id = store
    v2, wanted = versions["v2"].id, [ids["v1_sent"], ids["v2_sent"]]
    marked = in_transaction(sessions, lambda s: mark_consumed(
        s, bad_case_ids=wanted, build="abc123def456", job_id=job_id, actor="retrain"))
    assert marked == wanted
    with sessions() as s:
        assert names(training_cases(s, harness_version_id=versions["v3"].id), ids) == {
            "v3_sent"}
        assert names(training_cases(s, harness_version_id=v2, job_id=job_id), ids) == {
            "v1_sent", "v2_sent"}
        case = get_bad_case(s, bad_case_id=ids["v2_sent"])
        (entry,) = list_audit(s, entity="bad_case", entity_id=ids["v2_sent"])[:1]
    assert (case.consumed_by_build, case.consumed_by_job_id) == ("abc123def456", job_id)
    assert case.consumed_at is not None
    assert entry.action == "bad_case.consume" and entry.after["consumed_by_build"] == \
        "abc123def456" and entry.before["consumed_by_build"] is None


def test_another_build_does_not_take_over_a_consumed_case(sessions, store):
    versions, ids, job_id = store
    in_transaction(sessions, lambda s: mark_consumed(
        s, bad_case_ids=[ids["v2_sent"]], build="first0000000"))
    again = in_transaction(sessions, lambda s: mark_consumed(
        s, bad_case_ids=[ids["v2_sent"]], build="second000000", job_id=job_id))
    with sessions() as s:
        case = get_bad_case(s, bad_case_id=ids["v2_sent"])
        left = training_cases(s, harness_version_id=versions["v2"].id)
    assert again == [] and case.consumed_by_build == "first0000000"
    assert names(left, ids) == {"v1_sent"}
