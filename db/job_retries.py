"""When interrupted retrain jobs run again: a stale lease becomes an interruption, an
interrupted job is due once its backoff has passed, the service gives up after
`max_attempts` interruptions (counted since the last operator retry), and an operator
retries a failed job.

    policy = RetryPolicy(max_attempts=5, backoff_s=30)
    expire_stale_jobs(s, lease=timedelta(minutes=2), policy=policy)  # dead owners
    give_up_exhausted(s, policy=policy)                               # -> failed, with history
    for job in due_jobs(s): ...start its flow run...; postpone_job(s, job_id=job.id, ...)
    retry_job(s, job_id=7, actor="ann")                               # failed -> queued, due now

The reconciler (`flows/reconciler.py`) calls these on every pass; the console and
`hat job retry N` call `retry_job`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.errors import StoreError
from db.jobs_repo import get_job, transition_job
from db.models import RetrainJob, utcnow
from db.rows import as_utc, to_value
from db.values import Job

REQUEUED = "queued"  # a retried job waits as `queued` with a `retry_at`


@dataclass(frozen=True)
class RetryPolicy:
    """How often an interrupted job resumes: at most `max_attempts` interruptions, waiting
    `backoff_s` after the first, doubling, at most `backoff_max_s`."""

    max_attempts: int = 5
    backoff_s: float = 30.0
    backoff_max_s: float = 900.0

    def delay(self, interruptions: int) -> timedelta:
        """The wait before resuming after the `interruptions`-th interruption (1, 2, ...)."""
        seconds = self.backoff_s * 2 ** max(interruptions - 1, 0)
        return timedelta(seconds=min(seconds, self.backoff_max_s))

    def retry_at(self, job: Job, now: datetime | None = None) -> datetime:
        """When `job`, interrupted once more now, may resume."""
        return (now or utcnow()) + self.delay(interruptions(job.history) + 1)


def interruptions(history: list[dict]) -> int:
    """Interruptions since the last operator retry (a move to `queued`) in a job's history."""
    count = 0
    for entry in history:
        count = 0 if entry.get("to") == REQUEUED else count + (entry.get("to") == "interrupted")
    return count


def expire_stale_jobs(session: Session, *, lease: timedelta, policy: RetryPolicy,
                      actor: str = "reconciler") -> list[Job]:
    """Running jobs whose owner has not renewed its lease for `lease` (killed, host lost)
    become `interrupted`, due after the policy's backoff."""
    out = []
    for row in _rows(session, "running"):
        age = utcnow() - as_utc(row.updated_at)
        if age > lease:
            job = to_value(Job, row)
            out.append(transition_job(
                session, job_id=row.id, to="interrupted", actor=actor,
                reason=f"lease lost: no heartbeat for {age.total_seconds():.0f} s "
                       f"({row.reason or 'no owner'})", retry_at=policy.retry_at(job)))
    return out


def give_up_exhausted(session: Session, *, policy: RetryPolicy,
                      actor: str = "reconciler") -> list[Job]:
    """Interrupted jobs with `max_attempts` interruptions become `failed` (history kept)."""
    out = []
    for row in _rows(session, "interrupted"):
        count = interruptions(row.history)
        if count >= policy.max_attempts:
            out.append(transition_job(
                session, job_id=row.id, to="failed", actor=actor,
                reason=f"gave up after {count} interruptions (last: {row.reason})"))
    return out


def due_jobs(session: Session, *, now: datetime | None = None) -> list[Job]:
    """Interrupted and requeued jobs whose `retry_at` has come, oldest first."""
    now = now or utcnow()
    rows = _rows(session, "interrupted") + _rows(session, REQUEUED)
    due = [r for r in rows if r.retry_at is not None and as_utc(r.retry_at) <= now]
    return [to_value(Job, r) for r in sorted(due, key=lambda r: r.id)]


def postpone_job(session: Session, *, job_id: int, retry_at: datetime) -> None:
    """Move a waiting job's `retry_at` (its run was just started: give it time to claim)."""
    row = session.get(RetrainJob, job_id)
    if row is not None and row.state in ("interrupted", REQUEUED):
        row.retry_at = retry_at
        session.flush()


def retry_job(session: Session, *, job_id: int, actor: str) -> Job:
    """Queue a failed job again, due now (its interruption count starts over); the
    reconciler of `hat serve` starts it, resuming at the stage it reached."""
    job = get_job(session, job_id=job_id)
    if job.state != "failed":
        raise StoreError(f"job {job_id} is {job.state}: only a failed job can be retried")
    return transition_job(session, job_id=job_id, to=REQUEUED, actor=actor,
                          reason=f"retry requested by {actor}", retry_at=utcnow())


def _rows(session: Session, state: str) -> list[RetrainJob]:
    query = select(RetrainJob).where(RetrainJob.state == state).order_by(RetrainJob.id)
    return list(session.scalars(query.with_for_update()))
