"""Triggers on the real Prefect engine (test harness): 20 trigger events for one harness
version give one retrain job and one deployment run; an event emitted while the Prefect
server is down is delivered by the reconciler from the outbox."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from flow_helpers import submit_variant

from db.engine import in_transaction
from db.flow_repo import claim_job
from db.jobs_repo import list_jobs
from db.outbox_repo import list_outbox_events
from flows.reconciler import DEPLOYMENT_NAME, reconcile_once, submit_to_deployment
from flows.retrain import HANDLED, job_key, retrain
from flows.serve import retrain_deployment

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def deployment(prefect_harness):
    return retrain_deployment().apply()


def unique_line() -> str:
    """A harness line of this test only (the Prefect API is shared by the session)."""
    return f"line-{uuid.uuid4().hex[:8]}"


def deployment_runs(deployment_id, line: str) -> list:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id])))
    return [r for r in runs if r.parameters.get("line") == line]


def test_twenty_trigger_events_give_one_retrain_job(deployment, store, hat_env):
    from prefect.deployments import run_deployment

    version = submit_variant(store, 1, line=unique_line())
    key = job_key(version.line, version.number)
    params = {"harness_version": version.number, "line": version.line}
    run_ids = {str(run_deployment(name=DEPLOYMENT_NAME, parameters=params, idempotency_key=key,
                                  timeout=0, as_subflow=False).id) for _ in range(8)}
    run_ids |= set(reconcile_once(store).values())                  # the outbox row
    with store() as s:
        event = list_outbox_events(s)[0]
    run_ids |= {submit_to_deployment(event) for _ in range(5)}    # re-deliveries
    assert len(run_ids) == 1
    (run_id,) = run_ids
    # the deployment run holds the job (what its first task does) ...
    first = in_transaction(store, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner=run_id,
        lease=timedelta(minutes=10)))
    assert first.proceed
    # ... so 6 more runs of the flow itself (hat retrain, the console) stop at their first task
    results = [retrain(harness_version=version.number, line=version.line) for _ in range(6)]
    assert {r["outcome"] for r in results} == {HANDLED}
    assert {r["job_id"] for r in results} == {first.job.id}
    with store() as s:
        jobs = list_jobs(s, harness_version_id=version.id)
        assert list_outbox_events(s, pending_only=True) == []
    assert len(jobs) == 1 and jobs[0].attempts == 1 and jobs[0].state == "running"
    runs = deployment_runs(deployment, version.line)
    assert [str(r.id) for r in runs] == [run_id]
    assert runs[0].parameters == params | {"config_path": None}


def dead_api_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/api"


def test_an_event_lost_while_the_server_is_down_is_reconciled(deployment, store, hat_env):
    version = submit_variant(store, 2, line=unique_line())
    emitted = subprocess.run(   # another process, whose Prefect API is down: dropped, exit 0
        [sys.executable, "-c", "import sys; from flows.events import emit_version_created; "
         "emit_version_created(sys.argv[1], int(sys.argv[2]))", version.line,
         str(version.number)], env={**os.environ, "PREFECT_API_URL": dead_api_url()},
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert emitted.returncode == 0, emitted.stderr
    assert deployment_runs(deployment, version.line) == []
    started = reconcile_once(store)
    assert len(started) == 1
    runs = deployment_runs(deployment, version.line)
    assert [str(r.id) for r in runs] == list(started.values())
    assert runs[0].parameters == {"harness_version": version.number, "line": version.line,
                                  "config_path": None}
    assert reconcile_once(store) == {}
    with store() as s:
        assert list_outbox_events(s, pending_only=True) == []


def test_a_failed_submit_is_retried_on_a_later_pass(store):
    version = submit_variant(store, 3)
    calls = []

    def flaky(event):
        calls.append(event.id)
        if len(calls) == 1:
            raise ConnectionError("prefect api unreachable")
        return "run-1"

    with pytest.raises(ConnectionError):
        reconcile_once(store, flaky)
    assert reconcile_once(store, flaky) == {}                 # claimed, not yet stale
    assert reconcile_once(store, flaky, stale_after=timedelta(0)) == {calls[0]: "run-1"}
    with store() as s:
        event = list_outbox_events(s)[0]
    assert event.harness_version_id == version.id and event.done_at is not None


def test_the_event_trigger_and_the_reconciler_converge_on_one_job(deployment, store, hat_env):
    from flows.events import emit_version_created

    version = submit_variant(store, 4, line=unique_line())
    emit_version_created(version.line, version.number, emitter="console")
    deadline = time.monotonic() + 90
    while not deployment_runs(deployment, version.line) and time.monotonic() < deadline:
        time.sleep(0.5)
    (from_event,) = deployment_runs(deployment, version.line)      # the trigger fired
    assert str(from_event.parameters["harness_version"]) == str(version.number)
    from_outbox = reconcile_once(store)                            # the reconciler too
    owners = [str(from_event.id), *from_outbox.values()]
    assert len(set(owners)) == 2
    outcomes = [in_transaction(store, lambda s, o=o: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner=o,
        lease=timedelta(minutes=10))).outcome for o in owners]
    assert outcomes == ["started", HANDLED]
    with store() as s:
        assert len(list_jobs(s, harness_version_id=version.id)) == 1
