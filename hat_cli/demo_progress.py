"""Live progress of a retrain flow run for `hat demo`: each stage as the store records it.

    with StageWatcher(sessions, version_id=2, trigger="harness-change", console=console):
        retrain(harness_version=2, ...)

A background thread polls the job's stage runs (`db.jobs_repo.list_stage_runs`) once a second
and prints each newly finished stage with the seconds since the previous one and its key
numbers (from the stage run's metrics), so the display follows what the flow has committed,
whatever it logs itself. The flow records `sft`, `opd`
and `rl` when each has finished, so the running stage is the one after the last printed.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from hat_cli.terminal import Terminal, key_numbers

if TYPE_CHECKING:  # the CLI imports every command module: keep the store's imports lazy
    from sqlalchemy.orm import Session, sessionmaker

    from db.values import Job, StageRunInfo

ORDER = ("zero_shot", "data", "sft", "opd", "rl", "eval")
LABELS = {"zero_shot": "zero-shot check", "data": "HSA data build",
          "sft": "HSA-SFT", "opd": "General OPD", "rl": "HSA-RL",
          "eval": "evaluation + latency + gates"}
KEY_METRICS = {"zero_shot": ("t1.accuracy", "t2.accuracy"), "sft": ("train_loss",),
               "opd": ("train_loss",), "rl": ("train_loss",),
               "eval": ("candidate.t1.accuracy", "candidate.t2.accuracy",
                        "candidate.ifeval.ife_p")}


def find_job(sessions: sessionmaker[Session], *, version_id: int, trigger: str) -> Job | None:
    """The retrain job of (version, trigger), if the flow has created it."""
    from db.jobs_repo import list_jobs

    with sessions() as s:
        jobs = list_jobs(s, harness_version_id=version_id)
    return next((j for j in jobs if j.trigger == trigger), None)


class StageWatcher:
    """Print each stage of one job as it finishes (a context manager around the flow call)."""

    def __init__(self, sessions: sessionmaker[Session], *, version_id: int, trigger: str,
                 console: Terminal, interval: float = 1.0) -> None:
        self.sessions, self.version_id, self.trigger = sessions, version_id, trigger
        self.console, self.interval = console, interval
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="demo-progress", daemon=True)
        self._last = time.perf_counter()

    def __enter__(self) -> StageWatcher:
        # a re-run: stages already recorded are not news
        self.seen = {r.stage for r in self._finished()}
        self._last = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.poll()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll()

    def _finished(self) -> list[StageRunInfo]:
        job = find_job(self.sessions, version_id=self.version_id, trigger=self.trigger)
        if job is None:
            return []
        from db.jobs_repo import list_stage_runs

        with self.sessions() as s:
            return list_stage_runs(s, job_id=job.id)

    def poll(self) -> None:
        """Print the stages recorded since the last poll (safe to call from any thread)."""
        for run in self._finished():
            stage = run.stage
            if stage in self.seen:
                continue
            self.seen.add(stage)
            now = time.perf_counter()
            following = _next(stage) if stage != "zero_shot" else None  # retrain or not?
            after = f"; now: {LABELS[following]}" if following else ""
            numbers = key_numbers({k: run.metrics[k] for k in KEY_METRICS.get(stage, ())
                                   if isinstance(run.metrics.get(k), int | float)})
            self.console.print(f"  [green]done[/] {LABELS.get(stage, stage)} "
                               f"({now - self._last:.1f} s)"
                               f"{': ' + numbers if numbers else ''}{after}", highlight=False)
            self._last = now


def _next(stage: str) -> str | None:
    if stage not in ORDER or stage == ORDER[-1]:
        return None
    return ORDER[ORDER.index(stage) + 1]
