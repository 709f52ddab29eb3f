"""`db.console_queries` on SQLite and PostgreSQL, over the demo history."""

from __future__ import annotations

import pytest
from demo_data import add_demo_history

from db.console_queries import (
    audit_page,
    failure_types,
    job_listing,
    jobs_page,
    latest_jobs,
    models_by_ids,
    models_of_job,
    models_page,
    slot_harness_version_id,
)
from db.engine import in_transaction
from db.release_repo import promote


@pytest.fixture
def ids(sessions):
    return in_transaction(sessions, lambda s: add_demo_history(s, bad_cases=6))


def test_jobs(sessions, ids):
    with sessions() as s:
        page = jobs_page(s, limit=2)
        assert [j.job.id for j in page] == [ids["job_running"], ids["job_base"]]
        older = jobs_page(s, before_id=page[-1].job.id, limit=10)
        assert {j.job.id for j in older} == {ids["job_good"], ids["job_weak"]}
        assert [j.number for j in jobs_page(s, state="running")] == [4]
        assert job_listing(s, job_id=ids["job_good"]).number == 2
        assert job_listing(s, job_id=999) is None
        latest = latest_jobs(s, version_ids=[ids["v1"], ids["v4"], 999])
        assert {v: j.state for v, j in latest.items()} == {ids["v1"]: "succeeded",
                                                            ids["v4"]: "running"}
        assert latest_jobs(s, version_ids=[]) == {}


def test_models_and_slots(sessions, ids):
    with sessions() as s:
        page = models_page(s, limit=2)
        assert [m.model.id for m in page] == [ids["mv_weak"], ids["mv_good"]]
        assert page[0].number == 3
        assert set(models_by_ids(s, ids=[ids["mv_base"], 999])) == {ids["mv_base"]}
        assert [m.id for m in models_of_job(s, job_id=ids["job_good"])] == [ids["mv_good"]]
        assert slot_harness_version_id(s, slot="ab") == ids["v1"]
        assert slot_harness_version_id(s, slot="other") is None
    in_transaction(sessions, lambda s: promote(s, slot="ab",
                                               model_version_id=ids["mv_good"], actor="t"))
    with sessions() as s:
        assert slot_harness_version_id(s, slot="ab") == ids["v2"]


def test_audit_and_failure_types(sessions, ids):
    with sessions() as s:
        first = audit_page(s, limit=5)
        assert len(first) == 5 and first[0].id > first[-1].id
        assert audit_page(s, before_id=first[-1].id, limit=1)[0].id < first[-1].id
        assert {e.entity for e in audit_page(s, entity="slot")} == {"slot"}
        assert failure_types(s) and list(failure_types(s)) == sorted(failure_types(s))
