"""`hat serve` for real: a local Prefect server, the deployment, the reconciler; a submitted
harness version reaches its zero-shot verdict; SIGTERM stops everything; the A/B gateway
answers beside it. Slow: marked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from flow_helpers import submit_variant

from db.jobs_repo import list_jobs, list_stage_runs
from hat_core.inference.server import free_port

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SERVE = ("import typer; from hat_cli.serve_cmd import serve; typer.run(serve)")


def test_serve_runs_a_submitted_version_and_stops_on_sigterm(store, hat_env, tmp_path):
    config = Path(__file__).with_name("retrain_test.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.pop("HAT_PREFECT_API_URL", None)
    log = (tmp_path / "serve.log").open("w")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVE, "--config", str(config),
                             "--reconcile-every", "1", "--gateway-port", str(port)],
                            cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: "retrain/harness-change" in (tmp_path / "serve.log").read_text(),
                 proc, 240, tmp_path)
        health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).json()
        assert health["experiment"] == "ab-default" and health["ready"] is False  # no champion
        submitted = time.monotonic()
        version = submit_variant(store, 1)
        wait_for(lambda: zero_shot_recorded(store, version.id), proc, 300, tmp_path)
        verdict_s = time.monotonic() - submitted
        print(f"submit -> zero-shot verdict: {verdict_s:.1f} s")
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(90)
        log.close()
    assert code == 0, (tmp_path / "serve.log").read_text()[-3000:]
    assert "stopped" in (tmp_path / "serve.log").read_text()
    server = list((hat_env / "prefect").glob("server.log"))
    assert server, "serve did not start its own Prefect server"


def zero_shot_recorded(store, version_id: int) -> bool:
    with store() as s:
        jobs = list_jobs(s, harness_version_id=version_id)
        return bool(jobs) and any(r.stage == "zero_shot"
                                  for r in list_stage_runs(s, job_id=jobs[0].id))


def wait_for(condition, proc, timeout: float, tmp: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if proc.poll() is not None:
            raise AssertionError("hat serve exited:\n" + (tmp / "serve.log").read_text()[-3000:])
        time.sleep(0.5)
    raise AssertionError("timed out:\n" + (tmp / "serve.log").read_text()[-3000:])
