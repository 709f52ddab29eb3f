"""Claiming a retrain job with a lease (`db.flow_repo`): one owner per (version, trigger),
"already handled" for everyone else, take-over after the owner died, retry after failure.
Every test runs on SQLite and on PostgreSQL (marker `postgres`), the race included."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from flow_helpers import submit_variant

from db.engine import in_transaction, make_engine, make_session_factory
from db.flow_repo import (
    HANDLED,
    RESUMED,
    STARTED,
    TAKEN_OVER,
    claim_job,
    find_stage_run,
    finish_job,
    heartbeat_job,
)
from db.jobs_repo import add_stage_run, list_jobs

LEASE = timedelta(minutes=5)


@pytest.fixture
def store(databases, backend):
    """A fresh store at head on each backend (overrides the SQLite-only `store`)."""
    engine = make_engine(databases.migrated(backend), pool_size=20, max_overflow=5)
    yield make_session_factory(engine)
    engine.dispose()


def claim(store, version, owner, lease=LEASE, trigger="harness-change"):
    return in_transaction(store, lambda s: claim_job(
        s, harness_version_id=version.id, trigger=trigger, owner=owner, lease=lease))


def test_first_claim_starts_and_others_are_already_handled(store):
    version = submit_variant(store, 1)
    first = claim(store, version, "run-a")
    assert first.outcome == STARTED and first.job.state == "running" and first.proceed
    again = claim(store, version, "run-b")
    assert again.outcome == HANDLED and not again.proceed
    assert claim(store, version, "run-a").outcome == RESUMED  # the same owner, e.g. a retry
    with store() as s:
        assert len(list_jobs(s, harness_version_id=version.id)) == 1


def test_twenty_concurrent_claims_give_one_owner(store):
    version = submit_variant(store, 2)
    outcomes, barrier = [], threading.Barrier(20)

    def worker(i):
        barrier.wait()
        outcomes.append(claim(store, version, f"run-{i}").outcome)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes).count(STARTED) == 1 and outcomes.count(HANDLED) == 19
    with store() as s:
        jobs = list_jobs(s, harness_version_id=version.id)
    assert len(jobs) == 1 and jobs[0].attempts == 1


def test_a_stale_lease_is_taken_over(store):
    version = submit_variant(store, 3)
    claim(store, version, "dead-run")
    time.sleep(1.2)
    took = claim(store, version, "new-run", lease=timedelta(seconds=1))
    assert took.outcome == TAKEN_OVER and took.job.attempts == 2
    assert took.job.reason == "running: new-run"
    assert not in_transaction(store, lambda s: heartbeat_job(s, job_id=took.job.id,
                                                             owner="dead-run"))
    assert in_transaction(store, lambda s: heartbeat_job(s, job_id=took.job.id, owner="new-run"))


def test_heartbeats_keep_the_lease(store):
    version = submit_variant(store, 4)
    job = claim(store, version, "live-run").job
    for _ in range(3):
        time.sleep(0.5)
        in_transaction(store, lambda s: heartbeat_job(s, job_id=job.id, owner="live-run"))
    assert claim(store, version, "other", lease=timedelta(seconds=1)).outcome == HANDLED


def test_finished_jobs_are_handled_and_failed_ones_resume(store):
    done, failed = submit_variant(store, 5), submit_variant(store, 6)
    job = claim(store, done, "a").job
    in_transaction(store, lambda s: finish_job(s, job_id=job.id, to="succeeded", reason="ok"))
    assert claim(store, done, "b").outcome == HANDLED
    job = claim(store, failed, "a").job
    in_transaction(store, lambda s: finish_job(s, job_id=job.id, to="failed", reason="boom"))
    again = claim(store, failed, "b")
    assert again.outcome == RESUMED and again.job.attempts == 2


def test_each_trigger_kind_has_its_own_job(store):
    version = submit_variant(store, 7)
    assert claim(store, version, "a").outcome == STARTED
    assert claim(store, version, "b", trigger="weekly-2026W49").outcome == STARTED


def test_find_stage_run(store):
    version = submit_variant(store, 8)
    job = claim(store, version, "a").job
    assert in_transaction(store, lambda s: find_stage_run(s, job_id=job.id, stage="sft")) is None
    in_transaction(store, lambda s: add_stage_run(s, job_id=job.id, stage="sft",
                                                  mlflow_run_id="r1"))
    found = in_transaction(store, lambda s: find_stage_run(s, job_id=job.id, stage="sft"))
    assert found.mlflow_run_id == "r1"


def test_weekly_runs_are_one_job_per_iso_week():
    from datetime import UTC, datetime

    from flows.retrain import job_key, trigger_kind

    monday = datetime(2026, 11, 30, 3, tzinfo=UTC)
    assert trigger_kind("weekly", monday) == "weekly-2026W49"
    assert trigger_kind("harness-change", monday) == "harness-change"
    assert job_key("live", 3) == "harness-live-3"
    assert job_key("live", 3, "weekly-2026W49") == "weekly-2026W49-live-3"
