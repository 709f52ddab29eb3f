"""Read-only queries the operator console's pages need beyond the repository functions.

Keyword-only, session first, frozen values out; each one rides an existing index so the pages
stay fast with 100,000 bad cases: jobs by `(harness_version_id, trigger)` and `(state, id)`,
model versions by `job_id`, audit entries by `(entity, entity_id, id)` or the primary key.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.models import (
    AuditRow,
    BadCaseRow,
    HarnessLine,
    HarnessVersionRow,
    ModelVersionRow,
    PromotionRow,
    RetrainJob,
)
from db.rows import to_value
from db.values import AuditEntry, Job, ModelVersion


@dataclass(frozen=True)
class JobListing:
    """A retrain job with the harness version (line, number) it retrains for."""

    job: Job
    line: str
    number: int


@dataclass(frozen=True)
class ModelListing:
    """A model version with the harness version its job trained on (None: unknown)."""

    model: ModelVersion
    line: str | None
    number: int | None


def latest_jobs(session: Session, *, version_ids: list[int]) -> dict[int, Job]:
    """The newest job of each of `version_ids` (versions without a job are absent)."""
    if not version_ids:
        return {}
    query = select(RetrainJob).where(RetrainJob.harness_version_id.in_(version_ids))
    out: dict[int, Job] = {}
    for row in session.scalars(query.order_by(RetrainJob.id)):
        out[row.harness_version_id] = to_value(Job, row)
    return out


def jobs_page(
    session: Session,
    *,
    state: str | None = None,
    harness_version_id: int | None = None,
    before_id: int | None = None,
    limit: int = 50,
) -> list[JobListing]:
    """Newest jobs first with their harness version; `before_id` pages further back."""
    query = (
        select(RetrainJob, HarnessLine.name, HarnessVersionRow.number)
        .join(HarnessVersionRow, RetrainJob.harness_version_id == HarnessVersionRow.id)
        .join(HarnessLine, HarnessVersionRow.line_id == HarnessLine.id)
        .order_by(RetrainJob.id.desc()).limit(limit)
    )
    if state is not None:
        query = query.where(RetrainJob.state == state)
    if harness_version_id is not None:
        query = query.where(RetrainJob.harness_version_id == harness_version_id)
    if before_id is not None:
        query = query.where(RetrainJob.id < before_id)
    return [JobListing(to_value(Job, row), line, number)
            for row, line, number in session.execute(query)]


def job_listing(session: Session, *, job_id: int) -> JobListing | None:
    """One job with its harness version, or None."""
    query = (
        select(RetrainJob, HarnessLine.name, HarnessVersionRow.number)
        .join(HarnessVersionRow, RetrainJob.harness_version_id == HarnessVersionRow.id)
        .join(HarnessLine, HarnessVersionRow.line_id == HarnessLine.id)
        .where(RetrainJob.id == job_id)
    )
    found = session.execute(query).first()
    return JobListing(to_value(Job, found[0]), found[1], found[2]) if found else None


def models_page(
    session: Session, *, before_id: int | None = None, limit: int = 50
) -> list[ModelListing]:
    """Newest model versions first, each with the harness version it was trained on."""
    query = _models().order_by(ModelVersionRow.id.desc()).limit(limit)
    if before_id is not None:
        query = query.where(ModelVersionRow.id < before_id)
    return [_listing(*found) for found in session.execute(query)]


def models_by_ids(session: Session, *, ids: list[int]) -> dict[int, ModelListing]:
    """The model versions with these ids (missing ids are absent)."""
    if not ids:
        return {}
    query = _models().where(ModelVersionRow.id.in_(ids))
    return {found[0].id: _listing(*found) for found in session.execute(query)}


def models_of_job(session: Session, *, job_id: int) -> list[ModelVersion]:
    """The model versions a job registered, oldest first."""
    query = select(ModelVersionRow).where(ModelVersionRow.job_id == job_id)
    return [to_value(ModelVersion, r) for r in session.scalars(query.order_by(ModelVersionRow.id))]


def slot_harness_version_id(session: Session, *, slot: str) -> int | None:
    """The harness version the model now holding `slot` was trained on, if known."""
    latest = (
        select(PromotionRow.model_version_id).where(PromotionRow.slot == slot)
        .order_by(PromotionRow.id.desc()).limit(1).scalar_subquery()
    )
    query = (
        select(RetrainJob.harness_version_id)
        .join(ModelVersionRow, ModelVersionRow.job_id == RetrainJob.id)
        .where(ModelVersionRow.id == latest)
    )
    return session.scalar(query)


def audit_page(
    session: Session,
    *,
    entity: str | None = None,
    entity_id: str | None = None,
    before_id: int | None = None,
    limit: int = 50,
) -> list[AuditEntry]:
    """Newest audit entries first, optionally of one entity kind (and id); keyset pages."""
    query = select(AuditRow).order_by(AuditRow.id.desc()).limit(limit)
    if entity is not None:
        query = query.where(AuditRow.entity == entity)
    if entity_id is not None:
        query = query.where(AuditRow.entity_id == str(entity_id))
    if before_id is not None:
        query = query.where(AuditRow.id < before_id)
    return [to_value(AuditEntry, r) for r in session.scalars(query)]


def failure_types(session: Session) -> tuple[str, ...]:
    """The distinct failure types of the stored bad cases (index `ix_bad_cases_type_id`)."""
    query = select(BadCaseRow.failure_type).distinct().order_by(BadCaseRow.failure_type)
    return tuple(session.scalars(query))


def _models():
    return (
        select(ModelVersionRow, HarnessLine.name, HarnessVersionRow.number)
        .outerjoin(RetrainJob, ModelVersionRow.job_id == RetrainJob.id)
        .outerjoin(HarnessVersionRow, RetrainJob.harness_version_id == HarnessVersionRow.id)
        .outerjoin(HarnessLine, HarnessVersionRow.line_id == HarnessLine.id)
    )


def _listing(row: ModelVersionRow, line: str | None, number: int | None) -> ModelListing:
    return ModelListing(to_value(ModelVersion, row), line, number)
