"""What the retrain flow needs from the store beyond the plain repositories: claiming a job
with a lease (exactly once per harness version, and take-over after a crash), heartbeats,
and idempotent look-ups of stage runs and model versions by job.

A running job belongs to one owner (a flow run id, kept in the job's `reason` as
`running: <owner>`); its `updated_at` is the lease heartbeat. A second run for the same job
sees it running with a fresh lease and stops ("already handled"); after the owner died
(SIGKILL, lost host) the lease goes stale and the next run takes the job over, audited as
running -> interrupted -> running. A run stopped from outside (a signal) marks its job
`interrupted` with `interrupt_job`; the next claim resumes it (`db/job_retries.py` decides
when). `enter_stage` records the stage a running job has reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from db.jobs_repo import create_job, get_job, transition_job
from db.models import ModelVersionRow, RetrainJob, StageRun, utcnow
from db.rows import to_value
from db.values import Job, ModelVersion, StageRunInfo

OWNER_PREFIX = "running: "
STARTED, RESUMED, TAKEN_OVER, HANDLED = "started", "resumed", "taken-over", "already-handled"


@dataclass(frozen=True)
class JobClaim:
    """The job and what happened: `started`, `resumed` (retry of a failed job, or the same
    owner again), `taken-over` (stale lease) or `already-handled` (nothing to do)."""

    job: Job
    outcome: str

    @property
    def proceed(self) -> bool:
        return self.outcome != HANDLED


def claim_job(
    session: Session,
    *,
    harness_version_id: int,
    trigger: str,
    owner: str,
    lease: timedelta,
    actor: str = "system",
) -> JobClaim:
    """Create or get the job for (version, trigger) and make `owner` run it, if nobody else
    holds a live lease and it is not finished."""
    job = create_job(session, harness_version_id=harness_version_id, trigger=trigger,
                     actor=actor)
    row = _lock(session, job.id)
    held = OWNER_PREFIX + owner
    if row.state == "queued":
        return JobClaim(_run(session, job.id, held, actor), STARTED)
    if row.state in ("failed", "interrupted"):
        return JobClaim(_run(session, job.id, held, actor), RESUMED)
    if row.state != "running":
        return JobClaim(to_value(Job, row), HANDLED)
    if row.reason == held:
        return JobClaim(_touch(session, row), RESUMED)
    if _age(row.updated_at) <= lease:
        return JobClaim(to_value(Job, row), HANDLED)
    transition_job(session, job_id=job.id, to="interrupted", actor=actor,
                   reason=f"lease expired ({row.reason or 'no owner'}); taken over by {owner}")
    return JobClaim(_run(session, job.id, held, actor), TAKEN_OVER)


def heartbeat_job(session: Session, *, job_id: int, owner: str) -> bool:
    """Renew the lease of a running job; False when `owner` no longer holds it."""
    stmt = (
        update(RetrainJob)
        .where(RetrainJob.id == job_id, RetrainJob.state == "running",
               RetrainJob.reason == OWNER_PREFIX + owner)
        .values(updated_at=utcnow())
    )
    return session.execute(stmt).rowcount == 1


def enter_stage(session: Session, *, job_id: int, owner: str, stage: str) -> bool:
    """Record that the running job has reached `stage`; False when `owner` no longer
    holds it."""
    stmt = (
        update(RetrainJob)
        .where(RetrainJob.id == job_id, RetrainJob.state == "running",
               RetrainJob.reason == OWNER_PREFIX + owner)
        .values(stage=stage, updated_at=utcnow())
    )
    return session.execute(stmt).rowcount == 1


def interrupt_job(
    session: Session, *, job_id: int, owner: str, reason: str, retry_at: datetime,
    actor: str = "system",
) -> Job | None:
    """Mark the running job `interrupted` (it resumes at `retry_at` or later), if `owner`
    still holds it; None when it does not (another run took it over: nothing to record)."""
    row = _lock(session, job_id)
    if row.state != "running" or row.reason != OWNER_PREFIX + owner:
        return None
    return transition_job(session, job_id=job_id, to="interrupted", reason=reason,
                          retry_at=retry_at, actor=actor)


def finish_job(
    session: Session, *, job_id: int, to: str, reason: str, actor: str = "system"
) -> Job:
    """End a running job as `succeeded` or `failed` with a reason (the verdict)."""
    return transition_job(session, job_id=job_id, to=to, reason=reason, actor=actor)


def find_stage_run(session: Session, *, job_id: int, stage: str) -> StageRunInfo | None:
    """The first recorded run of `stage` in a job (a resumed job records a stage once)."""
    query = (select(StageRun).where(StageRun.job_id == job_id, StageRun.stage == stage)
             .order_by(StageRun.id).limit(1))
    row = session.scalars(query).first()
    return to_value(StageRunInfo, row) if row else None


def find_model_version_for_job(
    session: Session, *, job_id: int, registry_name: str
) -> ModelVersion | None:
    """The model version a job registered under `registry_name`, if any."""
    query = (select(ModelVersionRow)
             .where(ModelVersionRow.job_id == job_id,
                    ModelVersionRow.registry_name == registry_name)
             .order_by(ModelVersionRow.id).limit(1))
    row = session.scalars(query).first()
    return to_value(ModelVersion, row) if row else None


def find_model_version(
    session: Session, *, registry_name: str, version: str
) -> ModelVersion | None:
    """The stored model version `registry_name` / `version`, if recorded."""
    query = select(ModelVersionRow).where(ModelVersionRow.registry_name == registry_name,
                                          ModelVersionRow.version == str(version))
    row = session.scalars(query).first()
    return to_value(ModelVersion, row) if row else None


def _run(session: Session, job_id: int, held: str, actor: str) -> Job:
    return transition_job(session, job_id=job_id, to="running", reason=held, actor=actor)


def _touch(session: Session, row: RetrainJob) -> Job:
    row.updated_at = utcnow()
    session.flush()
    return get_job(session, job_id=row.id)


def _age(at: datetime) -> timedelta:
    if at.tzinfo is None:  # SQLite hands back naive UTC datetimes
        at = at.replace(tzinfo=UTC)
    return utcnow() - at


def _lock(session: Session, job_id: int) -> RetrainJob:
    query = select(RetrainJob).where(RetrainJob.id == job_id).with_for_update()
    return session.scalars(query.execution_options(populate_existing=True)).one()
