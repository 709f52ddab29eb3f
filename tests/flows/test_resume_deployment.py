"""The reconciler's resume pass on the real Prefect API: an interrupted job whose backoff has
passed gets a new run of the `retrain/harness-change` deployment, with the job's version,
line and trigger kind; the next pass leaves it alone while that run claims the job."""

from __future__ import annotations

import os
from datetime import timedelta
from uuid import UUID

from flow_helpers import submit_variant

from db.engine import in_transaction
from db.flow_repo import claim_job, interrupt_job
from db.job_retries import RetryPolicy
from db.models import utcnow
from flows.reconciler import resume_once

POLICY = RetryPolicy(max_attempts=3, backoff_s=0)


def test_an_interrupted_job_gets_a_new_deployment_run(prefect_harness, store):
    from prefect.client.orchestration import get_client

    from flows.serve import retrain_deployment

    retrain_deployment(None).apply()
    version = submit_variant(store, 1)
    job = in_transaction(store, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="weekly-2026W49", owner="gone",
        lease=timedelta(minutes=5))).job
    in_transaction(store, lambda s: interrupt_job(s, job_id=job.id, owner="gone",
                                                  reason="stopped by SIGTERM",
                                                  retry_at=utcnow()))
    started = resume_once(store, policy=POLICY, lease=timedelta(minutes=2))
    assert list(started) == [job.id]
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(UUID(started[job.id]))
    assert run.parameters["harness_version"] == version.number
    assert (run.parameters["line"], run.parameters["trigger"]) == (version.line,
                                                                   "weekly-2026W49")
    assert resume_once(store, policy=POLICY, lease=timedelta(minutes=2)) == {}


def test_reconcile_once_also_resumes_the_due_interrupted_jobs(prefect_harness, store, hat_env,
                                                              monkeypatch, tmp_path):
    """`hat serve --reconcile-once` (cron, tests) does what one pass of the loop does: the
    outbox events, then the interrupted jobs whose backoff has passed."""
    from typer.testing import CliRunner

    from flows.serve import retrain_deployment
    from hat_cli.main import app

    for name in ("PREFECT_HOME", "PREFECT_RUNNER_POLL_FREQUENCY"):  # the command sets them
        monkeypatch.setenv(name, os.environ.get(name, str(tmp_path / "prefect")
                                                if name == "PREFECT_HOME" else "2"))
    retrain_deployment(None).apply()
    version = submit_variant(store, 2)
    job = in_transaction(store, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner="gone",
        lease=timedelta(minutes=5))).job
    in_transaction(store, lambda s: interrupt_job(s, job_id=job.id, owner="gone",
                                                  reason="stopped by SIGTERM",
                                                  retry_at=utcnow()))
    result = CliRunner().invoke(app, ["serve", "--reconcile-once"])
    assert result.exit_code == 0, result.output
    assert f"resuming job {job.id}: flow run " in result.output
    assert resume_once(store, policy=POLICY, lease=timedelta(minutes=2)) == {}  # postponed
