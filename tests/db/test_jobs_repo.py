"""Retrain jobs: one per (version, trigger), allowed state changes only, stage runs."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from store_helpers import variant

from db.audit_repo import list_audit
from db.engine import in_transaction
from db.errors import StoreError
from db.harness_repo import submit_harness
from db.jobs_repo import (
    add_stage_run,
    create_job,
    get_job,
    list_jobs,
    list_stage_runs,
    transition_job,
)
from hat_core.errors import NotFoundError


@pytest.fixture
def version_id(sessions) -> int:
    return in_transaction(
        sessions, lambda s: submit_harness(s, harness=variant(1), author="ann", note="")
    ).id


def tx(sessions, fn, **kwargs):
    return in_transaction(sessions, lambda s: fn(s, **kwargs))


def test_create_job_is_idempotent_per_version_and_trigger(sessions, version_id):
    job = tx(sessions, create_job, harness_version_id=version_id, trigger="harness_change")
    assert (job.state, job.attempts, job.reason) == ("queued", 0, "")
    assert tx(sessions, create_job, harness_version_id=version_id, trigger="harness_change") == job
    weekly = tx(sessions, create_job, harness_version_id=version_id, trigger="weekly")
    assert weekly.id != job.id
    with sessions() as s:
        assert [j.id for j in list_jobs(s, harness_version_id=version_id)] == [weekly.id, job.id]
        assert len(list_audit(s, entity="retrain_job")) == 2


def test_concurrent_create_job_makes_one_job(db_url, sessions, version_id):
    def create(_):
        return tx(sessions, create_job, harness_version_id=version_id, trigger="harness_change")

    with ThreadPoolExecutor(max_workers=10) as pool:
        jobs = list(pool.map(create, range(10)))
    assert len({j.id for j in jobs}) == 1


def test_happy_path_retry_and_attempts(sessions, version_id):
    job = tx(sessions, create_job, harness_version_id=version_id, trigger="harness_change")
    assert tx(sessions, transition_job, job_id=job.id, to="running").attempts == 1
    failed = tx(sessions, transition_job, job_id=job.id, to="failed", reason="OOM")
    assert (failed.state, failed.reason) == ("failed", "OOM")
    assert tx(sessions, transition_job, job_id=job.id, to="running").attempts == 2
    assert tx(sessions, transition_job, job_id=job.id, to="succeeded").state == "succeeded"
    with sessions() as s:
        entries = list_audit(s, entity="retrain_job", entity_id=job.id)
    actions = [e.action for e in entries]
    assert actions[:4] == ["job.succeeded", "job.running", "job.failed", "job.running"]
    assert entries[2].before["state"] == "running" and entries[2].after["state"] == "failed"


def test_skip_needs_a_reason(sessions, version_id):
    job = tx(sessions, create_job, harness_version_id=version_id, trigger="harness_change")
    with pytest.raises(StoreError, match="needs a reason"):
        tx(sessions, transition_job, job_id=job.id, to="skipped")
    skipped = tx(sessions, transition_job, job_id=job.id, to="skipped", reason="zero-shot ok")
    assert (skipped.state, skipped.reason) == ("skipped", "zero-shot ok")


@pytest.mark.parametrize(
    ("path", "refused"),
    [([], "succeeded"), (["running"], "skipped"), (["running", "succeeded"], "running"),
     (["running", "failed"], "succeeded"), ([], "exploded")],
)
def test_refused_transitions(sessions, version_id, path, refused):
    job = tx(sessions, create_job, harness_version_id=version_id, trigger="harness_change")
    for state in path:
        tx(sessions, transition_job, job_id=job.id, to=state, reason="r")
    with pytest.raises(StoreError, match="valid:"):
        tx(sessions, transition_job, job_id=job.id, to=refused, reason="r")
    with sessions() as s:
        assert get_job(s, job_id=job.id).state == (path[-1] if path else "queued")


def test_unknown_job(sessions):
    with pytest.raises(NotFoundError):
        tx(sessions, transition_job, job_id=999, to="running")
    with sessions() as s, pytest.raises(NotFoundError):
        get_job(s, job_id=999)


def test_stage_runs(sessions, version_id):
    job = tx(sessions, create_job, harness_version_id=version_id, trigger="weekly")
    tx(sessions, add_stage_run, job_id=job.id, stage="sft", mlflow_run_id="r1",
       metrics={"loss": 0.5}, artifact_uri="file:///m/sft")
    tx(sessions, add_stage_run, job_id=job.id, stage="rl", mlflow_run_id="r2")
    with sessions() as s:
        runs = list_stage_runs(s, job_id=job.id)
    assert [(r.stage, r.mlflow_run_id) for r in runs] == [("sft", "r1"), ("rl", "r2")]
    assert runs[0].metrics == {"loss": 0.5} and runs[1].metrics == {}
