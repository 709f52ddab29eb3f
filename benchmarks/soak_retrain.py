"""The retrain soak: many harness versions, each retrained while its worker is stopped several
times (SIGTERM and SIGKILL, at stage boundaries and inside stages) and resumed by the
reconciler's pass; a table of what survived and what was redone.

    .venv/bin/python benchmarks/soak_retrain.py --versions 3 --stops 3 --runs 1 --seed 0

The chaos test's set-up (tests/flows/test_chaos_slow.py, whose helpers it reuses) at a larger
scale: the `test`-size base, tests/flows/retrain_test.yaml with short leases, the workers on a
temporary Prefect API, a fresh SQLite store and MLflow store per run. Per run it reports the
versions, the jobs completed, the interruptions survived, the lost jobs (a version without a
succeeded job: must be 0), the duplicate registrations (more than one model version or stage
run for one job: must be 0), and the redone work: stage task runs started again after an
interruption, as a share of the stage task runs the jobs needed (Prefect task runs of the
stage tasks that started, not served from the cache, minus those that completed, over those
that completed). The last row is the median over the runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "flows")]
STAGE_TASKS = ("base_model", "evaluate", "build_data", "train", "latency")
LEASE_S = 6


@dataclass
class RunResult:
    versions: int = 0
    completed: int = 0
    interruptions: int = 0
    lost: int = 0
    duplicates: int = 0
    stage_runs_needed: int = 0
    stage_runs_redone: int = 0
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def redone_share(self) -> float:
        return self.stage_runs_redone / max(self.stage_runs_needed, 1)


def prepare(work: Path, cache: Path) -> None:
    """A fresh home, store and MLflow store for one run (the base-model cache is shared)."""
    home = work / "home"
    home.mkdir(parents=True)
    os.environ.update({
        "HAT_HOME": str(home), "HAT_DATABASE_URL": f"sqlite:///{home / 'hat.db'}",
        "HAT_MLFLOW_TRACKING_URI": f"sqlite:///{home / 'mlflow.db'}",
        "HAT_CACHE_DIR": str(cache), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})


def soak_run(work: Path, versions: int, stops: int, seed: int) -> RunResult:
    """Retrain `versions` versions one after the other, each stopped `stops` times."""
    from prefect.settings import PREFECT_API_URL
    from test_chaos_slow import Workers, chaos_plan
    from test_pipeline_slow import job_config

    from db.engine import make_engine, make_session_factory
    from db.job_retries import RetryPolicy
    from db.migrate import upgrade
    from flows.stages import base_model_dir

    home = Path(os.environ["HAT_HOME"])
    upgrade(os.environ["HAT_DATABASE_URL"])
    store = make_session_factory(make_engine(os.environ["HAT_DATABASE_URL"]))
    registry = f"soak-{uuid.uuid4().hex[:8]}"
    config = job_config(work, registry, job_lease_s=LEASE_S,
                        resume={"max_attempts": stops + 5, "backoff_s": 0},
                        sft={"max_steps": 6, "save_steps": 2})
    base_model_dir(None, "test", 0, home, Path(os.environ["HAT_CACHE_DIR"]))
    workers = Workers(config, work, PREFECT_API_URL.value())
    policy = RetryPolicy(max_attempts=stops + 5, backoff_s=0)
    result, started = RunResult(versions=versions), time.monotonic()
    try:
        for i in range(1, versions + 1):
            plan = chaos_plan(seed * 1000 + i, stops)
            one_version(store, workers, policy, i, plan, home, result)
    finally:
        workers.stop_all()
    result.wall_s = time.monotonic() - started
    count_duplicates(store, registry, result)
    count_stage_runs(result)
    return result


def one_version(store, workers, policy, i: int, plan, home: Path, result: RunResult) -> None:
    """Submit version `i`, stop its worker at each spot of `plan`, resume it, let it finish."""
    import signal

    from flow_helpers import submit_variant
    from test_chaos_slow import reach, resume, the_job

    from flows.retrain import job_key

    version = submit_variant(store, i)
    work = home / "runs" / job_key(version.line, version.number)
    proc = workers.start(version.number, "harness-change")
    try:
        for stage, wait, sig in plan:
            reach(store, version.id, stage, wait, work, proc, workers)
            proc.send_signal(sig)
            stopped(proc, result, version.number)
            job = the_job(store, version.id)
            print(f"v{version.number}: {signal.Signals(sig).name} at {job.stage}", flush=True)
            if job.state == "succeeded":  # the signal came after the job had finished
                result.notes.append(f"v{version.number}: {signal.Signals(sig).name} came "
                                    "after the job succeeded (not an interruption)")
                break
            proc = resume(store, workers, policy)
        code = proc.wait(900)
    except (AssertionError, OSError, subprocess.TimeoutExpired) as exc:  # counted, goes on
        result.notes.append(f"v{version.number}: {exc}"[:500])
        code = None
    job = the_job(store, version.id)
    survived = sum(e["to"] == "interrupted" for e in job.history)
    if code != 0:
        result.notes.append(f"v{version.number}: the last worker exited {code}")
    if job.state == "succeeded":  # a lost job is a version without a succeeded job
        result.completed += 1
        result.interruptions += survived
    else:
        result.lost += 1
        result.notes.append(f"v{version.number}: job {job.state} ({job.reason})")
    print(f"v{version.number}: job {job.state} after {survived} interruptions", flush=True)


def stopped(proc, result: RunResult, number: int, grace: float = 300) -> None:
    """Wait for the signalled worker; one still running after `grace` s is killed (noted:
    a stop that took too long, which a loaded machine can cause)."""
    from hat_core.children import stop_group

    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        result.notes.append(f"v{number}: worker {proc.pid} ignored its signal for {grace} s")
        stop_group(proc, grace=5)


def count_duplicates(store, registry: str, result: RunResult) -> None:
    """Model versions beyond one per job key (MLflow and store) and stage runs beyond one
    per stage of a job."""
    from collections import Counter

    from db.jobs_repo import list_jobs, list_stage_runs
    from flows.retrain import make_tracking
    from flows.tracking import JOB_KEY
    from hat_core.settings import load_settings

    client = make_tracking(load_settings()).client
    keys = Counter(mv.tags.get(JOB_KEY) for mv in
                   client.search_model_versions(f"name = '{registry}'"))
    result.duplicates += sum(n - 1 for n in keys.values())
    with store() as s:
        for job in list_jobs(s):
            stages = Counter(r.stage for r in list_stage_runs(s, job_id=job.id))
            result.duplicates += sum(n - 1 for n in stages.values())


def count_stage_runs(result: RunResult) -> None:
    """From the Prefect API: stage task runs that completed (needed) and those that started
    but did not complete (killed or stopped: redone by a later run); cached runs count as
    neither."""
    tally_stage_runs(task_run_states(), result)


def task_run_states(page: int = 200) -> list[tuple[str, str, str]]:
    """(task name, state name, state type) of every task run on the Prefect API (read by
    pages: the API refuses a limit above its default, 200)."""
    from prefect.client.orchestration import get_client

    out: list[tuple[str, str, str]] = []
    with get_client(sync_client=True) as client:
        while True:
            runs = client.read_task_runs(limit=page, offset=len(out))
            out += [(r.name.rsplit("-", 1)[0], r.state.name if r.state else "",
                     r.state.type.value if r.state else "") for r in runs]
            if len(runs) < page:
                return out


def tally_stage_runs(runs: list[tuple[str, str, str]], result: RunResult) -> None:
    for name, state, kind in runs:
        if name not in STAGE_TASKS or state in ("", "Cached"):
            continue
        if state == "Completed":
            result.stage_runs_needed += 1
        elif kind not in ("PENDING", "SCHEDULED"):
            result.stage_runs_redone += 1


def table(results: list[RunResult]) -> str:
    head = ("| run | versions | jobs completed | interruptions survived | lost jobs | "
            "duplicate registrations | stage runs redone / needed | redone share | wall |")
    rows = [head, "|" + "---|" * 9]
    for i, r in enumerate(results, 1):
        rows.append(f"| {i} | {r.versions} | {r.completed} | {r.interruptions} | {r.lost} | "
                    f"{r.duplicates} | {r.stage_runs_redone} / {r.stage_runs_needed} | "
                    f"{100 * r.redone_share:.1f}% | {r.wall_s / 60:.1f} min |")
    med = statistics.median
    rows.append(f"| median | {med(r.versions for r in results)} | "
                f"{med(r.completed for r in results)} | "
                f"{med(r.interruptions for r in results)} | {med(r.lost for r in results)} | "
                f"{med(r.duplicates for r in results)} | - | "
                f"{100 * med(r.redone_share for r in results):.1f}% | "
                f"{med(r.wall_s for r in results) / 60:.1f} min |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=5, help="harness versions per run")
    parser.add_argument("--stops", type=int, default=3, help="worker stops per version (>= 2)")
    parser.add_argument("--runs", type=int, default=3, help="runs; the table's last row is "
                                                            "their median")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=None,
                        help="base-model cache to reuse (default: a new one, built first)")
    args = parser.parse_args()
    if args.stops < 2:
        parser.error("--stops must be at least 2 (one SIGTERM and one SIGKILL)")
    top = Path(tempfile.mkdtemp(prefix="hat-soak-"))
    results = []
    for run in range(args.runs):
        work = top / f"run-{run}"
        prepare(work, args.cache or top / "cache")
        os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(work / "results")
        from prefect.testing.utilities import prefect_test_harness

        with prefect_test_harness(server_startup_timeout=180):
            results.append(soak_run(work, args.versions, args.stops, args.seed + run))
        for note in results[-1].notes:
            print("note:", note)
    print(f"soak: {args.versions} versions x {args.stops} stops, {args.runs} run(s), "
          f"seed {args.seed}, work in {top}")
    print(table(results))


if __name__ == "__main__":
    main()
