"""Retrain jobs and their stage runs.

A job is unique per (harness version, trigger kind): `create_job` returns the existing one
on a repeat. States move only along `ALLOWED`: queued -> running -> succeeded | failed,
queued -> skipped (with a reason), running -> interrupted (stopped from outside: a signal, a
lost lease; resumed later: interrupted -> running, or given up: interrupted -> failed),
failed -> running | queued (a retry; `attempts` counts runs). Every stop and retry appends an
entry to the job's `history` (time, new state, attempt, stage reached, reason, actor).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.errors import StoreError
from db.models import JOB_STATES, RetrainJob, StageRun, utcnow
from db.rows import snapshot, to_value
from db.values import Job, StageRunInfo
from hat_core.errors import NotFoundError

ALLOWED: dict[str, tuple[str, ...]] = {
    "queued": ("running", "skipped"),
    "running": ("succeeded", "failed", "interrupted"),
    "interrupted": ("running", "failed"),
    "failed": ("running", "queued"),
    "succeeded": (),
    "skipped": (),
}
_AUDITED = ("state", "reason", "attempts", "stage")
_HISTORY = ("interrupted", "failed", "queued")  # the moves a job's history records


def create_job(
    session: Session, *, harness_version_id: int, trigger: str, actor: str = "system"
) -> Job:
    """The job for (version, trigger): created queued, or the existing one."""
    existing = _find(session, harness_version_id, trigger)
    if existing is not None:
        return to_value(Job, existing)
    now = utcnow()
    row = RetrainJob(
        harness_version_id=harness_version_id, trigger=trigger, state="queued", reason="",
        attempts=0, created_at=now, updated_at=now,
    )
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError:
        found = _find(session, harness_version_id, trigger)
        if found is None:
            raise
        return to_value(Job, found)
    record_audit(
        session, actor=actor, action="job.create", entity="retrain_job", entity_id=row.id,
        after={"harness_version_id": harness_version_id, "trigger": trigger, "state": "queued"},
    )
    return to_value(Job, row)


def transition_job(
    session: Session, *, job_id: int, to: str, reason: str = "", actor: str = "system",
    retry_at: datetime | None = None,
) -> Job:
    """Move a job to state `to`; refuses changes `ALLOWED` does not list. `retry_at` is when
    an interrupted or requeued job may run again (cleared by any other move)."""
    row = _lock(session, job_id)
    if to not in JOB_STATES:
        raise StoreError(f"unknown job state {to!r}; valid: {', '.join(JOB_STATES)}")
    if to not in ALLOWED[row.state]:
        valid = ", ".join(ALLOWED[row.state]) or "none (final state)"
        raise StoreError(f"job {job_id} cannot go from {row.state} to {to}; valid: {valid}")
    if to == "skipped" and not reason:
        raise StoreError(f"job {job_id}: skipping needs a reason")
    before = snapshot(row, *_AUDITED)
    row.state, row.updated_at = to, utcnow()
    row.reason = reason or row.reason
    row.retry_at = retry_at
    if to == "running":
        row.attempts += 1
    if to in _HISTORY:
        row.history = [*row.history, _history_entry(row, actor)]
    session.flush()
    record_audit(
        session, actor=actor, action=f"job.{to}", entity="retrain_job", entity_id=job_id,
        before=before, after=snapshot(row, *_AUDITED),
    )
    return to_value(Job, row)


def get_job(session: Session, *, job_id: int) -> Job:
    """The job with id `job_id`."""
    row = session.get(RetrainJob, job_id)
    if row is None:
        raise NotFoundError(f"no retrain job with id {job_id}")
    return to_value(Job, row)


def list_jobs(
    session: Session,
    *,
    harness_version_id: int | None = None,
    state: str | None = None,
    limit: int = 100,
) -> list[Job]:
    """Newest jobs first, optionally for one version and/or in one state."""
    query = select(RetrainJob).order_by(RetrainJob.id.desc()).limit(limit)
    if harness_version_id is not None:
        query = query.where(RetrainJob.harness_version_id == harness_version_id)
    if state is not None:
        query = query.where(RetrainJob.state == state)
    return [to_value(Job, r) for r in session.scalars(query)]


def add_stage_run(
    session: Session,
    *,
    job_id: int,
    stage: str,
    mlflow_run_id: str = "",
    metrics: dict[str, Any] | None = None,
    artifact_uri: str = "",
    actor: str = "system",
) -> StageRunInfo:
    """Record one stage of a job (its MLflow run, metric summary, artifact location)."""
    row = StageRun(
        job_id=job_id, stage=stage, mlflow_run_id=mlflow_run_id, metrics=metrics or {},
        artifact_uri=artifact_uri, created_at=utcnow(),
    )
    session.add(row)
    session.flush()
    record_audit(
        session, actor=actor, action="stage_run.add", entity="stage_run", entity_id=row.id,
        after=snapshot(row, "job_id", "stage", "mlflow_run_id", "artifact_uri"),
    )
    return to_value(StageRunInfo, row)


def list_stage_runs(session: Session, *, job_id: int) -> list[StageRunInfo]:
    """The stage runs of a job in the order they were recorded."""
    query = select(StageRun).where(StageRun.job_id == job_id).order_by(StageRun.id)
    return [to_value(StageRunInfo, r) for r in session.scalars(query)]


def _history_entry(row: RetrainJob, actor: str) -> dict[str, Any]:
    return {"at": utcnow().isoformat(timespec="seconds"), "to": row.state,
            "attempt": row.attempts, "stage": row.stage, "reason": row.reason, "by": actor}


def _find(session: Session, harness_version_id: int, trigger: str) -> RetrainJob | None:
    query = select(RetrainJob).where(
        RetrainJob.harness_version_id == harness_version_id, RetrainJob.trigger == trigger
    )
    return session.scalars(query).first()


def _lock(session: Session, job_id: int) -> RetrainJob:
    query = select(RetrainJob).where(RetrainJob.id == job_id).with_for_update()
    row = session.scalars(query.execution_options(populate_existing=True)).first()
    if row is None:
        raise NotFoundError(f"no retrain job with id {job_id}")
    return row
