"""The SQL store's tables as SQLAlchemy 2 typed models.

Only `migrations/` creates or changes these tables (`hat db upgrade`); the models describe
them for queries, and a test checks that models and migrations agree. Callers outside `db/`
never see these classes: repository functions return the frozen values of `db.values`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

JOB_STATES = ("queued", "running", "succeeded", "failed", "skipped")
REVIEW_STATES = ("new", "confirmed", "dismissed", "fixed")
ROLES = ("viewer", "reviewer", "operator", "admin")


def utcnow() -> datetime:
    return datetime.now(UTC)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {dict[str, Any]: JSON, datetime: DateTime(timezone=True)}


class HarnessLine(Base):
    """A harness line (`Harness.harness`) and the last version number it handed out."""

    __tablename__ = "harness_lines"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    last_number: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class HarnessVersionRow(Base):
    """One immutable harness version: number within its line, hash, canonical document."""

    __tablename__ = "harness_versions"
    __table_args__ = (
        UniqueConstraint("line_id", "number", name="uq_harness_versions_line_number"),
        UniqueConstraint("line_id", "content_hash", name="uq_harness_versions_line_hash"),
        Index("ix_harness_versions_created_at", "created_at"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    line_id: Mapped[int] = mapped_column(ForeignKey("harness_lines.id"))
    number: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64))
    document: Mapped[str] = mapped_column(Text)
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("harness_versions.id"))
    author: Mapped[str] = mapped_column(String(200))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class OutboxEvent(Base):
    """A change event written with its version; the retrain trigger claims and completes it."""

    __tablename__ = "outbox_events"
    __table_args__ = (Index("ix_outbox_events_pending", "done_at", "id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(100))
    harness_version_id: Mapped[int] = mapped_column(ForeignKey("harness_versions.id"))
    payload: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    claimed_at: Mapped[datetime | None]
    done_at: Mapped[datetime | None]


class RetrainJob(Base):
    """One retrain of one harness version for one trigger kind."""

    __tablename__ = "retrain_jobs"
    __table_args__ = (
        UniqueConstraint("harness_version_id", "trigger", name="uq_retrain_jobs_version_trigger"),
        CheckConstraint(_in("state", JOB_STATES), name="state"),
        Index("ix_retrain_jobs_state_id", "state", "id"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    harness_version_id: Mapped[int] = mapped_column(ForeignKey("harness_versions.id"))
    trigger: Mapped[str] = mapped_column(String(50))
    state: Mapped[str] = mapped_column(String(20), default="queued")
    reason: Mapped[str] = mapped_column(Text, default="")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class StageRun(Base):
    """One training/eval stage of a job and its MLflow run."""

    __tablename__ = "stage_runs"
    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("retrain_jobs.id"), index=True)
    stage: Mapped[str] = mapped_column(String(50))
    mlflow_run_id: Mapped[str] = mapped_column(String(64), default="")
    metrics: Mapped[dict[str, Any]]
    artifact_uri: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ModelVersionRow(Base):
    """A registered model version (MLflow registry name + version) and its gate results."""

    __tablename__ = "model_versions"
    __table_args__ = (
        UniqueConstraint("registry_name", "version", name="uq_model_versions_name_version"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    registry_name: Mapped[str] = mapped_column(String(200))
    version: Mapped[str] = mapped_column(String(50))
    job_id: Mapped[int | None] = mapped_column(ForeignKey("retrain_jobs.id"), index=True)
    mlflow_run_id: Mapped[str] = mapped_column(String(64), default="")
    gate_results: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class EvalResultRow(Base):
    """One metric of one evaluation suite for one model version."""

    __tablename__ = "eval_results"
    id: Mapped[int] = mapped_column(primary_key=True)
    model_version_id: Mapped[int] = mapped_column(ForeignKey("model_versions.id"), index=True)
    harness_version_id: Mapped[int | None] = mapped_column(ForeignKey("harness_versions.id"))
    suite: Mapped[str] = mapped_column(String(100))
    metric: Mapped[str] = mapped_column(String(100))
    value: Mapped[float] = mapped_column(Float)
    cases_uri: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class BadCaseRow(Base):
    """A failed episode waiting for (or done with) human review."""

    __tablename__ = "bad_cases"
    __table_args__ = (
        CheckConstraint(_in("review_state", REVIEW_STATES), name="review_state"),
        Index("ix_bad_cases_state_type_id", "review_state", "failure_type", "id"),
        Index("ix_bad_cases_type_id", "failure_type", "id"),
        Index("ix_bad_cases_harness_id", "harness_version_id", "id"),
        Index("ix_bad_cases_model_id", "model_version_id", "id"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    episode: Mapped[dict[str, Any]]
    harness_version_id: Mapped[int] = mapped_column(ForeignKey("harness_versions.id"))
    model_version_id: Mapped[int | None] = mapped_column(ForeignKey("model_versions.id"))
    failure_type: Mapped[str] = mapped_column(String(100))
    judge_scores: Mapped[dict[str, Any]]
    review_state: Mapped[str] = mapped_column(String(20), default="new")
    label: Mapped[str] = mapped_column(String(100), default="")
    comment: Mapped[str] = mapped_column(Text, default="")
    send_to_training: Mapped[bool] = mapped_column(Boolean, default=False)
    reviewer: Mapped[str] = mapped_column(String(200), default="")
    reviewed_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PromotionRow(Base):
    """A model version put into a serving slot (or rolled back), with the gates it passed."""

    __tablename__ = "promotions"
    __table_args__ = (Index("ix_promotions_slot_id", "slot", "id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    slot: Mapped[str] = mapped_column(String(50))
    model_version_id: Mapped[int] = mapped_column(ForeignKey("model_versions.id"))
    previous_model_version_id: Mapped[int | None] = mapped_column(ForeignKey("model_versions.id"))
    actor: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(Text, default="")
    gate_snapshot: Mapped[dict[str, Any]]
    override: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class UserRow(Base):
    """A console/CLI user: a role and an argon2id password hash."""

    __tablename__ = "users"
    __table_args__ = (CheckConstraint(_in("role", ROLES), name="role"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    role: Mapped[str] = mapped_column(String(20))
    password_hash: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AuditRow(Base):
    """An append-only audit entry: who did what to which entity, before and after."""

    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_entity", "entity", "entity_id", "id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(100))
    entity: Mapped[str] = mapped_column(String(100))
    entity_id: Mapped[str] = mapped_column(String(100))
    before: Mapped[dict[str, Any] | None]
    after: Mapped[dict[str, Any] | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
