"""What stops a job from outside (interrupted, resumed later) and what is the job's own
failure (`flows.interruptions.interruption_cause`), and a lease that another run took: the
heartbeat notices and interrupts this run's main thread."""

from __future__ import annotations

import signal
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


def test_a_lease_taken_away_interrupts_the_run(store):
    version = submit_variant(store, 1)
    job = in_transaction(store, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner="me",
        lease=timedelta(minutes=5))).job
    with pytest.raises(KeyboardInterrupt), JobLease(store, job.id, "me", lease_s=0.4) as lease:
        in_transaction(store, lambda s: finish_job(s, job_id=job.id, to="failed",
                                                   reason="someone else"))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the heartbeat interrupts this loop
            time.sleep(0.1)
    assert lease.lost.is_set()
    assert interruption_cause(KeyboardInterrupt(), lease).startswith("lease lost")


def test_a_lease_interrupts_even_where_sigint_was_ignored(store):
    """A process started with SIGINT ignored (so `interrupt_main` alone would do nothing)."""
    import signal

    version = submit_variant(store, 1)
    job = in_transaction(store, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner="me",
        lease=timedelta(minutes=5))).job
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pytest.raises(KeyboardInterrupt), JobLease(store, job.id, "me", lease_s=0.4):
            in_transaction(store, lambda s: finish_job(s, job_id=job.id, to="failed",
                                                       reason="someone else"))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                time.sleep(0.1)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # put back as it was
    finally:
        signal.signal(signal.SIGINT, previous)
