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
    BigInteger,
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

JOB_STATES = ("queued", "running", "succeeded", "failed", "skipped", "interrupted")
REVIEW_STATES = ("new", "confirmed", "dismissed", "fixed")
ROLES = ("viewer", "reviewer", "operator", "admin")
SESSION_CLIENTS = ("console", "cli")
PAIRWISE_STATES = ("open", "closed")
PAIRWISE_SIDES = ("left", "right")
PAIRWISE_CHOICES = ("left", "right", "tie")  # what a reviewer picks: a shown side, or a tie
JUDGE_CHOICES = ("a", "b", "tie")  # a judge's pairwise verdict, in system terms


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
    # the stage the job reached, when an interrupted job may resume, and its stops (JSON list)
    stage: Mapped[str] = mapped_column(String(50), default="", server_default="")
    retry_at: Mapped[datetime | None] = mapped_column(nullable=True)
    history: Mapped[list[Any]] = mapped_column(JSON, default=list, server_default="[]")


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
    # the data build that took the case into training (its dataset version), and its job
    consumed_by_build: Mapped[str | None] = mapped_column(String(64))
    consumed_by_job_id: Mapped[int | None] = mapped_column(ForeignKey("retrain_jobs.id"))
    consumed_at: Mapped[datetime | None]


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
    """A console/CLI user: a role, an argon2id password hash and, for single sign-on, the
    identity (an OIDC claim's value) that logs in as this user (`db.sso_repo`)."""

    __tablename__ = "users"
    __table_args__ = (CheckConstraint(_in("role", ROLES), name="role"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    role: Mapped[str] = mapped_column(String(20))
    password_hash: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    sso_identity: Mapped[str | None] = mapped_column(String(320), index=True, unique=True)


class UserSessionRow(Base):
    """A login (console or CLI): the sha256 of its random token, its user, when it ends.

    Valid while `revoked_at` is empty and `expires_at` is ahead; never extended. Logout,
    a password or role change and the user's removal revoke it (`db.sessions_repo`).
    """

    __tablename__ = "user_sessions"
    __table_args__ = (CheckConstraint(_in("client", SESSION_CLIENTS), name="client"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    client: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class LoginThrottleRow(Base):
    """Failed logins of one user name or one client (`user:NAME`, `client:ADDRESS`): how
    many in the current window, and until when further attempts are refused."""

    __tablename__ = "login_throttles"
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    window_start: Mapped[datetime]
    locked_until: Mapped[datetime | None]


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
    prev_hash: Mapped[str | None] = mapped_column(String(64))  # the chain (db.audit_chain)
    entry_hash: Mapped[str | None] = mapped_column(String(64))


class AbAnalysisRow(Base):
    """A saved A/B analysis: the file's name and sha256, the settings and the whole result.

    The per-user rows stay out of the store (they can be millions of rows of personal data);
    the sha256 says which file was analysed and `result` is `AbReport.to_dict()`.
    """

    __tablename__ = "ab_analyses"
    __table_args__ = (Index("ix_ab_analyses_source_sha256", "source_sha256"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    source_name: Mapped[str] = mapped_column(String(500))
    source_sha256: Mapped[str] = mapped_column(String(64))
    control: Mapped[str] = mapped_column(String(100))
    treatment: Mapped[str] = mapped_column(String(100))
    metrics: Mapped[list[str]] = mapped_column(JSON)
    n_rows: Mapped[int] = mapped_column(Integer)
    n_users: Mapped[int] = mapped_column(Integer)
    trustworthy: Mapped[bool] = mapped_column(Boolean)
    settings: Mapped[dict[str, Any]]
    result: Mapped[dict[str, Any]]
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PairwiseReviewRow(Base):
    """A blind pairwise review of system A against system B; identities hidden until closed."""

    __tablename__ = "pairwise_reviews"
    __table_args__ = (
        CheckConstraint(_in("state", PAIRWISE_STATES), name="state"),
        Index("ix_pairwise_reviews_state_id", "state", "id"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(10), default="open")
    system_a: Mapped[str] = mapped_column(String(200))
    system_b: Mapped[str] = mapped_column(String(200))
    model_version_a_id: Mapped[int | None] = mapped_column(ForeignKey("model_versions.id"))
    model_version_b_id: Mapped[int | None] = mapped_column(ForeignKey("model_versions.id"))
    seed: Mapped[int] = mapped_column(BigInteger)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    closed_by: Mapped[str] = mapped_column(String(200), default="")
    closed_at: Mapped[datetime | None]


class PairwiseItemRow(Base):
    """One scenario of a review: the two responses as shown, and (hidden) which side is A."""

    __tablename__ = "pairwise_items"
    __table_args__ = (
        UniqueConstraint("review_id", "position", name="uq_pairwise_items_review_position"),
        UniqueConstraint("review_id", "scenario_id", name="uq_pairwise_items_review_scenario"),
        CheckConstraint(_in("a_side", PAIRWISE_SIDES), name="a_side"),
        CheckConstraint("judge_choice IS NULL OR " + _in("judge_choice", JUDGE_CHOICES),
                        name="judge_choice"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    review_id: Mapped[int] = mapped_column(ForeignKey("pairwise_reviews.id"))
    position: Mapped[int] = mapped_column(Integer)
    scenario_id: Mapped[str] = mapped_column(String(200))
    prompt: Mapped[str] = mapped_column(Text, default="")
    response_left: Mapped[str] = mapped_column(Text)
    response_right: Mapped[str] = mapped_column(Text)
    a_side: Mapped[str] = mapped_column(String(5))
    judge_choice: Mapped[str | None] = mapped_column(String(5))


class PairwiseVoteRow(Base):
    """One reviewer's choice on one item (left, right or tie) with a comment."""

    __tablename__ = "pairwise_votes"
    __table_args__ = (
        UniqueConstraint("item_id", "reviewer", name="uq_pairwise_votes_item_reviewer"),
        CheckConstraint(_in("choice", PAIRWISE_CHOICES), name="choice"),
        Index("ix_pairwise_votes_review_id", "review_id", "id"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    review_id: Mapped[int] = mapped_column(ForeignKey("pairwise_reviews.id"))
    item_id: Mapped[int] = mapped_column(ForeignKey("pairwise_items.id"))
    reviewer: Mapped[str] = mapped_column(String(200))
    choice: Mapped[str] = mapped_column(String(5))
    comment: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class AbExperimentRow(Base):
    """An A/B experiment of a serving slot: the salt of its sticky assignment and its split."""

    __tablename__ = "ab_experiments"
    __table_args__ = (
        CheckConstraint("treatment_share > 0 AND treatment_share < 1", name="treatment_share"),
        UniqueConstraint("name", name="uq_ab_experiments_name"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    slot: Mapped[str] = mapped_column(String(50))
    salt: Mapped[str] = mapped_column(String(64))
    treatment_share: Mapped[float] = mapped_column(Float)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ExposureRow(Base):
    """One request the A/B gateway answered (or failed): who, which arm, which model, how."""

    __tablename__ = "exposures"
    __table_args__ = (
        UniqueConstraint("request_id", name="uq_exposures_request_id"),
        Index("ix_exposures_experiment_user", "experiment_id", "user_id", "id"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    experiment_id: Mapped[int] = mapped_column(ForeignKey("ab_experiments.id"))
    user_id: Mapped[str] = mapped_column(String(200))
    arm: Mapped[str] = mapped_column(String(50))
    model_version: Mapped[str] = mapped_column(String(250))
    model_version_id: Mapped[int | None] = mapped_column(ForeignKey("model_versions.id"))
    harness_version: Mapped[str] = mapped_column(String(50))
    request_id: Mapped[str] = mapped_column(String(64))
    latency_ms: Mapped[float] = mapped_column(Float)
    status: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class OutcomeRow(Base):
    """One outcome event of an experiment: a metric's value for one user on one day."""

    __tablename__ = "outcomes"
    __table_args__ = (
        UniqueConstraint("experiment_id", "user_id", "day", "metric",
                         name="uq_outcomes_experiment_user_day_metric"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    experiment_id: Mapped[int] = mapped_column(ForeignKey("ab_experiments.id"))
    user_id: Mapped[str] = mapped_column(String(200))
    day: Mapped[str] = mapped_column(String(50))
    metric: Mapped[str] = mapped_column(String(100))
    value: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
