"""Interrupted jobs (`db.job_retries`, `db.flow_repo.interrupt_job`): a stop from outside is
`interrupted` with the stage reached, a stale lease becomes one, backoff decides when it is
due, the service gives up after the maximum (history kept), an operator retries a failed
job. SQLite and PostgreSQL."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from store_helpers import variant

from db.engine import in_transaction
from db.errors import StoreError
from db.flow_repo import RESUMED, STARTED, claim_job, enter_stage, finish_job, interrupt_job
from db.harness_repo import submit_harness
from db.job_retries import (
    RetryPolicy,
    due_jobs,
    expire_stale_jobs,
    give_up_exhausted,
    interruptions,
    postpone_job,
    retry_job,
)
from db.jobs_repo import get_job
from db.models import utcnow

LEASE = timedelta(minutes=5)
POLICY = RetryPolicy(max_attempts=2, backoff_s=10, backoff_max_s=15)


def running_job(sessions, i: int, owner: str = "run-a"):
    version = in_transaction(sessions, lambda s: submit_harness(s, harness=variant(i),
                                                                author="ann"))
    return claim(sessions, version.id, owner)


def claim(sessions, version_id, owner, lease=LEASE):
    return in_transaction(sessions, lambda s: claim_job(
        s, harness_version_id=version_id, trigger="harness-change", owner=owner, lease=lease))


def test_an_interrupted_job_keeps_its_stage_and_resumes_there(sessions):
    job = running_job(sessions, 1).job
    assert in_transaction(sessions, lambda s: enter_stage(s, job_id=job.id, owner="run-a",
                                                          stage="sft"))
    now = utcnow()
    stopped = in_transaction(sessions, lambda s: interrupt_job(
        s, job_id=job.id, owner="run-a", reason="TerminationSignal", retry_at=now))
    assert stopped.state == "interrupted" and stopped.stage == "sft"
    assert stopped.history[-1] | {"at": ""} == {"at": "", "to": "interrupted", "attempt": 1,
                                                 "stage": "sft", "reason": "TerminationSignal",
                                                 "by": "system"}
    with sessions() as s:
        assert [j.id for j in due_jobs(s, now=now)] == [job.id]
    again = claim(sessions, job.harness_version_id, "run-b")
    assert again.outcome == RESUMED and again.job.attempts == 2 and again.job.stage == "sft"
    assert again.job.retry_at is None
    with sessions() as s:
        assert due_jobs(s) == []


def test_only_the_owner_marks_its_job_interrupted(sessions):
    job = running_job(sessions, 2).job
    assert in_transaction(sessions, lambda s: interrupt_job(
        s, job_id=job.id, owner="someone-else", reason="x", retry_at=utcnow())) is None
    assert not in_transaction(sessions, lambda s: enter_stage(
        s, job_id=job.id, owner="someone-else", stage="rl"))
    with sessions() as s:
        assert get_job(s, job_id=job.id).state == "running"


def test_backoff_doubles_up_to_its_cap():
    assert [POLICY.delay(n).total_seconds() for n in (1, 2, 3)] == [10, 15, 15]
    assert RetryPolicy(backoff_s=30).delay(3) == timedelta(seconds=120)


def test_a_stale_lease_becomes_an_interruption_due_after_backoff(sessions):
    job = running_job(sessions, 3).job
    time.sleep(1.1)
    with sessions.begin() as s:
        assert expire_stale_jobs(s, lease=timedelta(minutes=1), policy=POLICY) == []
        expired = expire_stale_jobs(s, lease=timedelta(seconds=1), policy=POLICY)
    assert [j.id for j in expired] == [job.id] and expired[0].state == "interrupted"
    assert expired[0].reason.startswith("lease lost")
    with sessions() as s:
        assert due_jobs(s) == []                      # the backoff (10 s) has not passed
        assert [j.id for j in due_jobs(s, now=utcnow() + timedelta(seconds=11))] == [job.id]
    in_transaction(sessions, lambda s: postpone_job(s, job_id=job.id,
                                                    retry_at=utcnow() + timedelta(hours=1)))
    with sessions() as s:
        assert due_jobs(s, now=utcnow() + timedelta(seconds=11)) == []


def test_the_service_gives_up_after_the_maximum_and_an_operator_retries(sessions):
    job = running_job(sessions, 4).job
    for owner in ("run-a", "run-b"):
        claim(sessions, job.harness_version_id, owner)
        in_transaction(sessions, lambda s, o=owner: interrupt_job(
            s, job_id=job.id, owner=o, reason=f"stop {o}", retry_at=utcnow()))
    with sessions.begin() as s:
        gave_up = give_up_exhausted(s, policy=POLICY)
    assert [j.state for j in gave_up] == ["failed"]
    assert gave_up[0].reason == "gave up after 2 interruptions (last: stop run-b)"
    assert [e["to"] for e in gave_up[0].history] == ["interrupted", "interrupted", "failed"]
    retried = in_transaction(sessions, lambda s: retry_job(s, job_id=job.id, actor="ann"))
    assert retried.state == "queued" and interruptions(retried.history) == 0
    with sessions() as s:
        assert [j.id for j in due_jobs(s)] == [job.id]
    assert claim(sessions, job.harness_version_id, "run-c").outcome == STARTED


def test_only_failed_jobs_can_be_retried(sessions):
    job = running_job(sessions, 5).job
    with pytest.raises(StoreError, match="only a failed job"):
        in_transaction(sessions, lambda s: retry_job(s, job_id=job.id, actor="ann"))
    in_transaction(sessions, lambda s: finish_job(s, job_id=job.id, to="succeeded",
                                                  reason="ok"))
    with pytest.raises(StoreError, match="is succeeded"):
        in_transaction(sessions, lambda s: retry_job(s, job_id=job.id, actor="ann"))
