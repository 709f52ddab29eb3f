"""What stops a job from outside (interrupted, resumed later) and what is the job's own
failure (`flows.interruptions.interruption_cause`), and a lease that another run took: the
heartbeat notices and stops this run's thread (only that one)."""

from __future__ import annotations

import signal
import threading
import time
from datetime import timedelta

import httpx
import pytest
from flow_helpers import submit_variant
from prefect.exceptions import TerminationSignal
from sqlalchemy.exc import OperationalError

from db.engine import in_transaction
from db.flow_repo import claim_job, finish_job
from flows.interruptions import JobLease, LeaseLost, interruption_cause


@pytest.mark.parametrize(("exc", "cause"), [
    (TerminationSignal(signal.SIGTERM), "stopped by SIGTERM"),
    (KeyboardInterrupt("SIGTERM"), "stopped by SIGTERM"),   # hat_core.children.raise_on_sigterm
    (KeyboardInterrupt(), "stopped by SIGINT"),
    (LeaseLost("job 1"), "lease lost: another run holds the job"),
    (httpx.ConnectError("refused"), "service unreachable: ConnectError: refused"),
    (OperationalError("SELECT 1", {}, Exception("could not connect")),
     "service unreachable: OperationalError"),
])
def test_stops_from_outside_are_interruptions(exc, cause):
    assert interruption_cause(exc).startswith(cause)


@pytest.mark.parametrize("exc", [ValueError("0 rows kept"), RuntimeError("gate refused"),
                                 KeyError("t1")])
def test_the_jobs_own_errors_are_failures(exc):
    assert interruption_cause(exc) is None


def _held(store, owner: str = "me", variant: int = 1):
    version = submit_variant(store, variant)
    return in_transaction(store, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner=owner,
        lease=timedelta(minutes=5))).job


def _take_away(store, job) -> None:
    in_transaction(store, lambda s: finish_job(s, job_id=job.id, to="failed",
                                               reason="someone else"))


def test_a_lease_taken_away_stops_the_run(store):
    job = _held(store)
    started = time.monotonic()
    with pytest.raises(LeaseLost), JobLease(store, job.id, "me", lease_s=0.4) as lease:
        _take_away(store, job)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the heartbeat stops this loop
            sum(range(1000))
    assert time.monotonic() - started < 30
    assert lease.lost.is_set()
    assert interruption_cause(LeaseLost(), lease).startswith("lease lost")


def test_a_lost_lease_stops_the_jobs_thread_and_nothing_else(store):
    """The job runs in a thread of its own (as a flow run beside a service's threads, or in
    a test runner): only that thread stops; the main thread is not interrupted, even with
    SIGINT ignored (a signal is not the mechanism)."""
    job = _held(store)
    stopped: list[BaseException] = []

    def body() -> None:
        try:
            with JobLease(store, job.id, "me", lease_s=0.4):
                _take_away(store, job)
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    sum(range(1000))
        except BaseException as exc:  # noqa: BLE001 - what stopped it is the assertion
            stopped.append(exc)

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker = threading.Thread(target=body)
        worker.start()
        waited = 0
        while worker.is_alive() and waited < 600:  # the main thread keeps running
            time.sleep(0.1)
            waited += 1
        assert not worker.is_alive()
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # untouched
    finally:
        signal.signal(signal.SIGINT, previous)
    assert [type(e) for e in stopped] == [LeaseLost]


def test_a_lease_that_holds_leaves_the_body_alone(store):
    """A body that ends while its lease holds ends normally, and nothing is raised into
    its thread later."""
    job = _held(store)
    with JobLease(store, job.id, "me", lease_s=0.4) as lease:
        time.sleep(0.5)   # two beats, both renewing
    _take_away(store, job)
    time.sleep(0.5)       # a heartbeat would have noticed by now, had it still run
    sum(range(1000))
    assert not lease.lost.is_set()


def test_a_lost_lease_crashes_the_flow_run_on_prefects_engine(prefect_harness, store):
    """Inside a flow and a task (the retrain flow's shape): the task is not retried, the
    flow run ends crashed, and the caller (here pytest's thread, which ran the flow) gets
    `LeaseLost`, not a `KeyboardInterrupt` that would end the whole process."""
    from prefect import flow, task
    from prefect.client.orchestration import get_client
    from prefect.runtime import flow_run

    job = _held(store)
    calls: list[int] = []

    @task(retries=2, retry_delay_seconds=0)
    def long_stage() -> None:
        calls.append(1)
        _take_away(store, job)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            sum(range(1000))

    @flow
    def a_job() -> None:
        runs.append(flow_run.get_id())
        with JobLease(store, job.id, "me", lease_s=0.4):
            long_stage()

    runs: list[str] = []
    started = time.monotonic()
    with pytest.raises(LeaseLost):
        a_job()
    assert time.monotonic() - started < 60
    assert calls == [1]
    with get_client(sync_client=True) as client:
        assert client.read_flow_run(runs[0]).state.is_crashed()


def test_a_job_the_body_ended_itself_is_not_a_lost_lease(store):
    """The flow stops the lease, ends the job in the store and then closes its MLflow run:
    the beats after that end must not read the finished job as taken away (a chaos run lost
    its last step that way under load). Without `stop`, the same ending raises."""
    job = _held(store)
    with JobLease(store, job.id, "me", lease_s=0.4) as lease:
        lease.stop()
        in_transaction(store, lambda s: finish_job(s, job_id=job.id, to="succeeded",
                                                   reason="done"))
        deadline = time.monotonic() + 1.0   # ten beat periods of closing work
        while time.monotonic() < deadline:
            sum(range(1000))
    assert not lease.lost.is_set()

    other = _held(store, owner="me-again", variant=2)
    with pytest.raises(LeaseLost), JobLease(store, other.id, "me-again", lease_s=0.4):
        in_transaction(store, lambda s: finish_job(s, job_id=other.id, to="succeeded",
                                                   reason="done"))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            sum(range(1000))
