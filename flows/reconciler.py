"""The reconciler: every stored harness version gets its retrain run, even when the change
event was lost (Prefect's `emit_event` drops events while the server is down).

It claims pending outbox rows (the store's `claim_outbox_events`; a claim older than
`stale_after` is taken again, so a reconciler that died loses nothing), starts the
`retrain/harness-change` deployment for each with the job's idempotency key (a repeat call
returns the same flow run), and marks the row done. The job row's uniqueness makes a run
that also came from the event trigger harmless: it exits "already handled".

Every pass also resumes jobs (`resume_once`): an interruption a flow run spooled while the
store was down is recorded (`flows/interruption_spool.py`); a running job whose lease went
stale becomes `interrupted`; an interrupted job past the retry policy's maximum becomes
`failed`; an interrupted or requeued job whose backoff has passed gets a new flow run of the
deployment (it resumes at the stage it reached: finished stages come from Prefect's task
cache).

    started = reconcile_once(sessions, submit_to_deployment)   # `hat serve --reconcile-once`
    resumed = resume_once(sessions, policy=RetryPolicy(), lease=timedelta(minutes=2))
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from db.engine import in_transaction
from db.harness_repo import get_version_by_id
from db.job_retries import (
    RetryPolicy,
    due_jobs,
    expire_stale_jobs,
    give_up_exhausted,
    postpone_job,
)
from db.models import utcnow
from db.outbox_repo import claim_outbox_events, mark_outbox_done
from db.values import ChangeEvent, HarnessVersion, Job
from flows.interruption_spool import apply_spool
from flows.retrain import FLOW_NAME, job_key

DEPLOYMENT = "harness-change"
DEPLOYMENT_NAME = f"{FLOW_NAME}/{DEPLOYMENT}"
Submit = Callable[[ChangeEvent], str]
Resubmit = Callable[[Job, HarnessVersion], str]


def submit_to_deployment(event: ChangeEvent) -> str:
    """Start (or find) the retrain run of the event's version; returns the flow run id."""
    from prefect.deployments import run_deployment

    line, number = event.payload["line"], int(event.payload["number"])
    run = run_deployment(
        name=DEPLOYMENT_NAME, parameters={"harness_version": number, "line": line},
        idempotency_key=job_key(line, number), timeout=0, as_subflow=False)
    return str(run.id)


def resubmit_to_deployment(job: Job, version: HarnessVersion) -> str:
    """Start a new flow run of the deployment for an interrupted or requeued job (a fresh
    idempotency key per wait: the run of an earlier attempt is not returned again)."""
    from prefect.deployments import run_deployment

    key = job_key(version.line, version.number, job.trigger)
    run = run_deployment(
        name=DEPLOYMENT_NAME,
        parameters={"harness_version": version.number, "line": version.line,
                    "trigger": job.trigger},
        idempotency_key=f"{key}-resume-{job.retry_at.timestamp():.0f}", timeout=0,
        as_subflow=False)
    return str(run.id)


def resume_once(
    sessions: sessionmaker[Session],
    resubmit: Resubmit = resubmit_to_deployment,
    *,
    policy: RetryPolicy,
    lease: timedelta,
    spool: Path | None = None,
    on_error: Callable[[str], None] = print,
) -> dict[int, str]:
    """Spooled interruptions -> interrupted (`flows.interruption_spool`, from `spool`),
    stale leases -> interrupted, exhausted -> failed, due jobs -> a new flow run each
    (then their `retry_at` moves a lease ahead, the time the run has to claim the job);
    returns job id -> flow run id."""
    spooled = apply_spool(sessions, spool, policy)
    for path in spooled.unreadable:
        on_error(f"interruption spool: {path} does not read; kept as {path.name[:-5]}.bad")
    in_transaction(sessions, lambda s: expire_stale_jobs(s, lease=lease, policy=policy))
    in_transaction(sessions, lambda s: give_up_exhausted(s, policy=policy))
    with sessions() as s:
        due = [(job, get_version_by_id(s, version_id=job.harness_version_id))
               for job in due_jobs(s)]
    started: dict[int, str] = {}
    for job, version in due:
        started[job.id] = resubmit(job, version)
        in_transaction(sessions, lambda s, j=job.id: postpone_job(
            s, job_id=j, retry_at=utcnow() + lease))
    return started


def reconcile_once(
    sessions: sessionmaker[Session],
    submit: Submit = submit_to_deployment,
    *,
    limit: int = 50,
    stale_after: timedelta = timedelta(minutes=10),
) -> dict[int, str]:
    """Claim pending change events, submit each, mark it done; returns event id -> run id.
    An event whose submit raises stays claimed and is retried after `stale_after`."""
    events = in_transaction(
        sessions, lambda s: claim_outbox_events(s, limit=limit, stale_after=stale_after))
    started: dict[int, str] = {}
    for event in events:
        started[event.id] = submit(event)
        in_transaction(sessions, lambda s, i=event.id: mark_outbox_done(s, event_ids=[i]))
    return started


class ReconcilerLoop(threading.Thread):
    """`reconcile_once` and `resume` (e.g. `resume_once` with the service's policy) every
    `interval` seconds until `stop()`, the first pass at once; errors are reported through
    `on_error` and the loop goes on (the events and jobs stay pending)."""

    def __init__(self, sessions: sessionmaker[Session], interval: float = 5.0,
                 submit: Submit = submit_to_deployment,
                 on_error: Callable[[Exception], None] = print,
                 resume: Callable[[], object] | None = None):
        super().__init__(name="hat-reconciler", daemon=True)
        self.sessions, self.interval, self.submit = sessions, interval, submit
        self.on_error, self.resume, self._halt = on_error, resume, threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            for step in (lambda: reconcile_once(self.sessions, self.submit), self.resume):
                try:
                    if step is not None:
                        step()
                except Exception as exc:  # noqa: BLE001 - a loop that must survive outages
                    self.on_error(exc)
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
