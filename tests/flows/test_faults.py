"""Faults a retrain job survives, each with a clear state and nothing half-registered:
the SQL store unreachable for 30 s mid-job (the store tasks retry through it), the MLflow
tracking store unreachable while logging (an interruption, resumed; a stage run left half
logged is finished, not logged twice), and a disk that fills while a checkpoint is written
(the stage fails with the reason, nothing is registered, the champion keeps its alias).

Real services only: the outage is PostgreSQL refusing connections to the job's database
(`ALLOW_CONNECTIONS false`, its sessions ended), the unreachable tracking store is an MLflow
client on a closed loopback port, the full disk a small tmpfs mount."""

from __future__ import annotations

import errno
import shutil
import socket
import subprocess
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from flow_helpers import registered_version, submit_variant

from db.engine import in_transaction, make_engine, make_session_factory
from db.flow_repo import claim_job
from db.jobs_repo import get_job
from flows.interruptions import interruption_cause
from flows.retrain import IO_RETRIES, reach
from flows.tracking import CHAMPION, STAGE, Tracking

OUTAGE_S = 30


# --- the SQL store unreachable ---------------------------------------------------------------

def _pg(url: str, sql: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    u = make_url(url)
    with psycopg.connect(host=u.host, port=u.port, user=u.username, dbname="postgres",
                         autocommit=True) as conn:
        conn.execute(sql)


def store_down(url: str) -> None:
    """No new connection to the database, and its open sessions ended."""
    name = url.rsplit("/", 1)[1]
    _pg(url, f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
    _pg(url, f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")


def store_up(url: str) -> None:
    _pg(url, f"ALTER DATABASE {url.rsplit('/', 1)[1]} ALLOW_CONNECTIONS true")


def running_job(databases):
    """A fresh PostgreSQL store at head with one job that `worker-1` runs: (url, sessions,
    job)."""
    url = databases.migrated("postgres")
    sessions = make_session_factory(make_engine(url))
    version = submit_variant(sessions, 1)
    job = in_transaction(sessions, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner="worker-1",
        lease=timedelta(minutes=5))).job
    return url, sessions, job


def test_the_store_tasks_retry_through_a_30_s_outage():
    """Their retry delays outlast a 30 s outage (beyond it the job is interrupted)."""
    assert sum(IO_RETRIES["retry_delay_seconds"]) > OUTAGE_S


@pytest.mark.postgres
def test_a_30_s_store_outage_mid_job_is_retried_and_the_job_goes_on(prefect_harness,
                                                                    databases):
    from prefect import flow

    url, sessions, job = running_job(databases)

    @flow
    def mid_job() -> None:
        reach(url, job.id, "worker-1", "sft")          # the task the job runs at each stage

    store_down(url)
    back = threading.Timer(OUTAGE_S, store_up, args=(url,))
    back.start()
    try:
        started = time.monotonic()
        state = mid_job(return_state=True)
        took = time.monotonic() - started
    finally:
        back.cancel()
        store_up(url)
    assert state.is_completed(), state.message
    assert took >= OUTAGE_S                               # it waited the outage out
    with sessions() as s:
        after = get_job(s, job_id=job.id)
    assert (after.state, after.stage) == ("running", "sft")


@pytest.mark.postgres
def test_a_store_outage_beyond_the_retries_is_an_interruption(databases):
    """What the job records when the store stays away: `interrupted`, service unreachable
    (the reconciler's lease expiry covers the case where even that cannot be written)."""
    url, sessions, job = running_job(databases)
    store_down(url)
    try:
        with pytest.raises(Exception) as caught:
            reach.fn(url, job.id, "worker-1", "sft")
    finally:
        store_up(url)
    assert interruption_cause(caught.value).startswith("service unreachable: OperationalError")


@pytest.mark.postgres
def test_an_interruption_the_store_cannot_take_is_spooled_and_recorded_later(databases,
                                                                           tmp_path):
    """SIGTERM while the store is down: the run retries the record briefly, then spools it;
    the reconciler's next pass, after the store is back and the lease is long stale, records
    the job `interrupted` at its stage with the real cause, not "lease lost"."""
    from db.job_retries import RetryPolicy
    from flows.interruption_spool import RECORD_WAITS, SPOOLED, record_interruption
    from flows.reconciler import resume_once

    url, sessions, job = running_job(databases)
    reach.fn(url, job.id, "worker-1", "sft")
    policy, spool = RetryPolicy(backoff_s=60), tmp_path / "spool"
    store_down(url)
    try:
        started = time.monotonic()
        outcome = record_interruption(sessions, job, "worker-1", "stopped by SIGTERM", policy,
                                      spool)
        took = time.monotonic() - started
    finally:
        store_up(url)
    assert outcome == SPOOLED and [p.name for p in spool.iterdir()] == [f"job-{job.id}.json"]
    assert sum(RECORD_WAITS) <= took < sum(RECORD_WAITS) + 10   # bounded: a stop has seconds
    with sessions() as s:
        assert get_job(s, job_id=job.id).state == "running"    # nothing written meanwhile
    time.sleep(1.2)

    def nothing_due(job, version):
        raise AssertionError(f"job {job.id} is not due yet")

    resume_once(sessions, nothing_due, policy=policy, lease=timedelta(seconds=1), spool=spool)
    with sessions() as s:
        after = get_job(s, job_id=job.id)
    assert (after.state, after.stage) == ("interrupted", "sft")
    assert after.reason == "stopped by SIGTERM (spooled while the store was down)"
    assert after.history[-1]["stage"] == "sft"
    assert list(spool.iterdir()) == []


def test_a_spooled_interruption_of_a_job_taken_over_is_dropped(store, tmp_path):
    """The spool never overrides the run that holds the job now; a file that does not read
    is set aside as `.bad` and named, and the pass goes on."""
    from db.job_retries import RetryPolicy
    from flows.interruption_spool import write_spooled
    from flows.reconciler import resume_once

    version = submit_variant(store, 1)
    job = in_transaction(store, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner="worker-2",
        lease=timedelta(minutes=5))).job
    spool = tmp_path / "spool"
    write_spooled(spool, job.id, "worker-1", "stopped by SIGTERM")
    (spool / "job-99.json").write_text("{not json", encoding="utf-8")
    said = []
    resume_once(store, policy=RetryPolicy(), lease=timedelta(minutes=5), spool=spool,
                on_error=said.append)
    with store() as s:
        after = get_job(s, job_id=job.id)
    assert (after.state, after.reason) == ("running", "running: worker-2")
    assert [p.name for p in spool.iterdir()] == ["job-99.bad"]
    assert said == [f"interruption spool: {spool / 'job-99.json'} does not read; "
                    "kept as job-99.bad"]


# --- the MLflow tracking store unreachable ----------------------------------------------------

def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_tracking_store_interrupts_the_job(monkeypatch, tmp_path):
    """MLflow wraps the refused connection in an `MlflowException`: still an interruption
    (resumed later), not the job's own failure."""
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")   # its own retries: minutes
    tracking = Tracking(f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(Exception) as caught:
        tracking.parent_run("line-a", "harness-line-a-1", {})
    cause = interruption_cause(caught.value)
    assert cause is not None and cause.startswith("service unreachable: ConnectionError")


def test_a_stage_run_left_half_logged_is_finished_not_logged_twice(tracking, tmp_path):
    """The tracking store went away after the stage's run was created and before its
    metrics and files were logged: the resumed job's `stage_run` completes that run."""
    parent = tracking.parent_run("line-h", "harness-line-h-1", {})
    experiment = tracking.client.get_run(parent).info.experiment_id
    left = tracking.client.create_run(experiment, run_name="eval", tags={
        "mlflow.parentRunId": parent, "hat.job_key": "harness-line-h-1", STAGE: "eval"})
    report = tmp_path / "report.json"
    report.write_text("{}")
    run_id = tracking.stage_run(parent, "eval", metrics={"t1.accuracy": 0.5},
                                artifacts={"reports": report}, tags={"hat.gates_verdict": "x"})
    assert run_id == left.info.run_id
    run = tracking.client.get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.metrics == {"t1.accuracy": 0.5}
    assert run.data.tags["hat.gates_verdict"] == "x"
    assert [a.path for a in tracking.client.list_artifacts(run_id)] == ["reports"]
    assert tracking.stage_run(parent, "eval") == run_id
    children = tracking.client.search_runs(
        [experiment], f"tags.`mlflow.parentRunId` = '{parent}'")
    assert len(children) == 1


# --- disk full while writing a checkpoint -----------------------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs: room for the stage's start, not for a checkpoint of the test base
    (weights plus optimizer states, about 2 MiB)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill ({done.stderr.strip()}): needs root")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture(scope="module")
def test_base(pytestconfig, tmp_path_factory) -> Path:
    from hat_core.basemodel import build_base_model

    cache = Path(pytestconfig.cache.mkdir("hat-base-models"))
    out = tmp_path_factory.mktemp("faults") / "base"
    return build_base_model(out, size="test", seed=0, cache_dir=cache).path


def test_disk_full_while_checkpointing_fails_the_stage_and_registers_nothing(
        small_disk, test_base, tracking, store, registry_name, tmp_path):
    from flows import stages
    from hat_core.training.rows import oracle_rows
    from hat_core.training.stage import MANIFEST

    champion = registered_version(store, tracking, registry_name, tmp_path, 1, passed=True)
    tracking.set_alias(registry_name, CHAMPION, champion)
    data = tmp_path / "sft.jsonl"
    harness = Path(__file__).resolve().parents[2] / "examples/configs/rl_mini_harness.yaml"
    import json

    data.write_text("\n".join(json.dumps(r) for r in oracle_rows(harness, 8, seed=0)) + "\n")
    parent = tracking.parent_run("line-d", "harness-line-d-1", {})
    out = small_disk / "sft"
    with pytest.raises(OSError) as caught:
        stages.train_stage("sft", {"max_steps": 2, "save_steps": 1, "max_length": 768,
                                   "num_threads": 1, "probe": {"enabled": False}},
                           base=test_base, output_dir=out, inputs={"dataset": str(data)},
                           tracking_uri=tracking.tracking_uri, experiment="hat/line-d",
                           parent_run_id=parent)
    exc = caught.value
    assert exc.errno == errno.ENOSPC
    assert interruption_cause(exc) is None                 # the job's failure: `failed`
    reason = f"{type(exc).__name__}: {exc}"                # the job's reason, as the flow writes
    assert reason.startswith(f"OSError: [Errno 28] disk full while the sft stage wrote its "
                             f"checkpoint under {out}")
    assert not (out / MANIFEST).exists()                   # no finished stage to resume from
    runs = tracking.client.search_runs(
        [tracking.client.get_run(parent).info.experiment_id], "tags.`mlflow.runName` = 'sft'")
    assert [r.info.status for r in runs] == ["FAILED"]
    versions = tracking.client.search_model_versions(f"name = '{registry_name}'")
    assert [str(v.version) for v in versions] == [champion]   # nothing half-registered
    assert tracking.alias_version(registry_name, CHAMPION) == champion
    shutil.rmtree(out, ignore_errors=True)


def test_only_a_full_disk_is_named_so(tmp_path, small_disk):
    """Another error on a disk with room is left as it is; ENOSPC, or any write error on a
    disk with (almost) nothing left, is named a full disk, with the stage and folder."""
    from flows.stages import disk_full

    assert disk_full("sft", tmp_path / "sft", RuntimeError("shape mismatch")) is None
    named = disk_full("opd", tmp_path / "opd", OSError(errno.ENOSPC, "No space left"))
    assert named.errno == errno.ENOSPC and "the opd stage" in str(named)
    (small_disk / "filler").write_bytes(b"\0" * (1024 * 1024 - 4096))
    assert disk_full("rl", small_disk / "rl", RuntimeError("unexpected pos 1 vs 2")) is not None
