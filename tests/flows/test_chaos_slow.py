"""The chaos test: one real retrain (the `test`-size base, tests/flows/retrain_test.yaml) whose
worker is stopped several times, with SIGTERM and SIGKILL, at stage boundaries and inside
stages, and resumed each time by the reconciler's pass (`flows.reconciler.resume_once`).

In the end the harness version has exactly one succeeded job, one registered model version,
one set of stage runs (store and MLflow), the interruptions in its history, and no process of
any worker is left. The plan is drawn from a seed (`HAT_CHAOS_SEED`, default 0) and printed.
The first worker is the `hat retrain` command with its own local Prefect server (a child that
must end with it); the others use the session's Prefect test API. Slow (minutes): marked."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import psutil
import pytest
from flow_helpers import submit_variant
from test_pipeline_slow import STAGES, job_config, versions_of

from db.flow_repo import find_model_version_for_job
from db.job_retries import RetryPolicy
from db.jobs_repo import get_job, list_jobs, list_stage_runs
from flows.reconciler import resume_once
from flows.retrain import job_key
from flows.stages import base_model_dir
from flows.tracking import JOB_KEY, Tracking
from hat_core.children import spawn, stop_group

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]
ROOT = Path(__file__).resolve().parents[2]
LEASE_S = 6
HAT = "from hat_cli.main import app; app()"
# where a worker may be stopped: (stage, seconds after the job reached it); 0 = the boundary
SPOTS = [("zero_shot", 2.0), ("data", 0.0), ("sft", "checkpoint"), ("opd", 0.0), ("rl", 1.0),
         ("eval", 3.0), ("latency", 0.0)]


def chaos_plan(seed: int, stops: int = 3) -> list[tuple[str, object, int]]:
    """`stops` spots in pipeline order, SIGTERM and SIGKILL both drawn at least once."""
    rng = random.Random(seed)
    spots = sorted(rng.sample(range(len(SPOTS)), stops))
    sigs = [signal.SIGTERM, signal.SIGKILL] + [rng.choice([signal.SIGTERM, signal.SIGKILL])
                                               for _ in range(stops - 2)]
    rng.shuffle(sigs)
    return [(*SPOTS[i], sig) for i, sig in zip(spots, sigs, strict=True)]


class Workers:
    """Starts `hat retrain` workers for the job and keeps their processes."""

    def __init__(self, config: str, log_dir: Path, api_url: str):
        self.config, self.log_dir, self.api_url, self.procs = config, log_dir, api_url, []

    def start(self, number: int, trigger: str, own_server: bool = False) -> subprocess.Popen:
        env = {**os.environ, "PREFECT_API_URL": self.api_url}
        if own_server:
            env.pop("PREFECT_API_URL")
            env["PREFECT_HOME"] = str(self.log_dir / "prefect-home")
        log = (self.log_dir / f"worker-{len(self.procs)}.log").open("w")
        proc = spawn(  # a worker too ends with this test process
            [sys.executable, "-c", HAT, "retrain", "--harness-version", str(number),
             "--trigger", trigger, "--config", self.config], cwd=ROOT, env=env, stdout=log,
            stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            stop_group(proc, grace=5)

    def resubmit(self, job, version) -> str:
        return str(self.start(version.number, job.trigger).pid)

    def log(self, i: int = -1) -> str:
        return sorted(self.log_dir.glob("worker-*.log"))[i].read_text()[-4000:]


def test_a_retrain_survives_sigterm_and_sigkill_at_any_stage(
        prefect_harness, store, hat_env, mlflow_uri, tmp_path, registry_name):
    from prefect.settings import PREFECT_API_URL

    seed = int(os.environ.get("HAT_CHAOS_SEED", "0"))
    plan = chaos_plan(seed)
    print(f"chaos plan (seed {seed}):", [(s, w, signal.Signals(g).name) for s, w, g in plan])
    version = submit_variant(store, 1)
    config = job_config(tmp_path, registry_name, job_lease_s=LEASE_S,
                        resume={"max_attempts": 10, "backoff_s": 0},
                        sft={"max_steps": 6, "save_steps": 2})
    base_model_dir(None, "test", 0, hat_env)  # built (or copied from the cache) before the plan
    workers = Workers(config, tmp_path, PREFECT_API_URL.value())
    policy = RetryPolicy(max_attempts=10, backoff_s=0)
    work = hat_env / "runs" / job_key(version.line, version.number)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    try:
        stopped_at = run_plan(plan, store, version, work, workers, policy)
    finally:
        workers.stop_all()
    check_one_of_everything(store, version, mlflow_uri, registry_name, stopped_at)
    assert_gone([p for p in psutil.Process().children(recursive=True) if p.pid not in before])
    print("stopped at", stopped_at, "- workers:", len(workers.procs))


def run_plan(plan, store, version, work, workers: Workers, policy) -> list[str]:
    """Start the first worker, stop and resume it at each spot of the plan, let the last one
    finish; the stages the job was stopped at."""
    proc = workers.start(version.number, "harness-change", own_server=True)
    stopped_at = []
    for stage, wait, sig in plan:
        reach(store, version.id, stage, wait, work, proc, workers)
        descendants = psutil.Process(proc.pid).children(recursive=True)
        proc.send_signal(sig)
        proc.wait(180)
        assert_gone(descendants)
        job = the_job(store, version.id)
        if job.state == "succeeded":  # the stop landed after the job had finished (a fast
            # machine ends eval, latency and registration within `wait`): nothing to interrupt
            print(f"{sig.name} at {stage} +{wait} came after the job succeeded; plan ends")
            return stopped_at
        if sig == signal.SIGTERM:
            assert job.state == "interrupted", workers.log()
            assert job.reason == "stopped by SIGTERM", job.reason
        stopped_at.append(job.stage)
        proc = resume(store, workers, policy)
    try:
        code = proc.wait(900)
    except subprocess.TimeoutExpired:
        code = None
    assert code == 0, workers.log()
    return stopped_at


def the_job(store, version_id: int):
    with store() as s:
        (job,) = list_jobs(s, harness_version_id=version_id)
    return job


def reach(store, version_id, stage, wait, work, proc, workers, timeout=600) -> None:
    """Wait until the job has reached `stage` (then `wait` s more, or its first checkpoint)."""
    order = ["", "base", *STAGES, "latency", "register"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the worker ended early ({proc.returncode}):\n{workers.log()}")
        jobs = [the_job(store, version_id)] if _has_job(store, version_id) else []
        # running: this worker has claimed the job (a resumed job keeps the stage it reached
        # before, so the stage alone would let a stop land before the claim)
        if jobs and jobs[0].state == "running" and \
                order.index(jobs[0].stage or "") >= order.index(stage):
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"timed out before {stage}:\n{workers.log()}")
    if wait == "checkpoint":
        while not any((work / "sft" / "checkpoints").glob("checkpoint-*")):
            if proc.poll() is not None or time.monotonic() > deadline:
                return
            time.sleep(0.2)
    else:
        time.sleep(wait)


def _has_job(store, version_id: int) -> bool:
    with store() as s:
        return bool(list_jobs(s, harness_version_id=version_id))


def resume(store, workers: Workers, policy: RetryPolicy) -> subprocess.Popen:
    """Reconciler passes until one starts a worker (a SIGKILLed owner's lease must end)."""
    deadline = time.monotonic() + 10 * LEASE_S
    while time.monotonic() < deadline:
        started = resume_once(store, workers.resubmit, policy=policy,
                              lease=timedelta(seconds=LEASE_S))
        if started:
            assert len(started) == 1
            return workers.procs[-1]
        time.sleep(1)
    raise AssertionError("no reconciler pass resumed the job")


def assert_gone(processes: list[psutil.Process], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    alive = processes
    while time.monotonic() < deadline:
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return
        time.sleep(0.3)
    raise AssertionError(f"left behind: {[(p.pid, p.cmdline()[:4]) for p in alive]}")


def check_one_of_everything(store, version, mlflow_uri, registry_name, stopped_at) -> None:
    with store() as s:
        job = the_job(store, version.id)
        stages = [r.stage for r in list_stage_runs(s, job_id=job.id)]
        stored = find_model_version_for_job(s, job_id=job.id, registry_name=registry_name)
        job = get_job(s, job_id=job.id)
    assert job.state == "succeeded" and job.attempts == len(stopped_at) + 1
    assert [e["to"] for e in job.history] == ["interrupted"] * len(stopped_at)
    assert [e["stage"] for e in job.history] == stopped_at
    assert stages == STAGES                                   # one store row per stage
    (mv,) = versions_of(mlflow_uri, registry_name)            # registered once
    assert stored is not None and stored.version == str(mv.version)
    client = Tracking(mlflow_uri).client
    parent = client.get_run(mv.run_id)
    key = job_key(version.line, version.number)
    tagged = client.search_runs([parent.info.experiment_id], f"tags.`{JOB_KEY}` = '{key}'")
    parents = [r for r in tagged if "hat.stage" not in r.data.tags]
    assert [r.info.run_id for r in parents] == [mv.run_id] and parent.info.status == "FINISHED"
    children = client.search_runs([parent.info.experiment_id],
                                  f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'")
    names = sorted(r.data.tags.get("hat.stage") for r in children)
    assert names == sorted(STAGES), names                     # one MLflow run per stage
