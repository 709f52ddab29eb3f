"""`hat job list|show|retry`: an operator queues a failed job again (proven by a password);
a viewer may not; a job that is not failed is refused with exit 2."""

from __future__ import annotations

import json
from datetime import timedelta

from flow_helpers import add_role, submit_variant
from typer.testing import CliRunner

from db.engine import in_transaction
from db.flow_repo import claim_job, finish_job
from db.job_retries import due_jobs
from hat_cli.main import app

PW = ("--password-stdin",)


def invoke(*args: str, password: str = "correct horse"):
    return CliRunner().invoke(app, list(args), input=password + "\n")


def failed_job(store):
    version = submit_variant(store, 1)
    job = in_transaction(store, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner="run",
        lease=timedelta(minutes=5))).job
    return in_transaction(store, lambda s: finish_job(s, job_id=job.id, to="failed",
                                                      reason="DataError: 0 rows kept"))


def test_an_operator_retries_a_failed_job(store, hat_env):
    add_role(store, "olga", "operator")
    add_role(store, "vic", "viewer")
    job = failed_job(store)
    listed = invoke("job", "list", "--state", "failed")
    assert listed.exit_code == 0 and "DataError: 0 rows kept" in listed.output
    viewer = invoke("job", "retry", str(job.id), "--actor", "vic", *PW)
    assert viewer.exit_code == 2 and "needs operator or admin" in viewer.output
    done = invoke("job", "retry", str(job.id), "--actor", "olga", *PW)
    assert done.exit_code == 0, done.output
    assert f"job {job.id} queued again" in done.output
    with store() as s:
        assert [j.id for j in due_jobs(s)] == [job.id]
    shown = json.loads(invoke("job", "show", str(job.id)).output)
    assert shown["state"] == "queued"
    assert [e["to"] for e in shown["history"]] == ["failed", "queued"]
    assert shown["history"][-1]["by"] == "olga"
    again = invoke("job", "retry", str(job.id), "--actor", "olga", *PW)
    assert again.exit_code == 2 and "only a failed job can be retried" in again.output
