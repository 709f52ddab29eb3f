"""The frozen values repository functions return; ORM rows never leave `db/`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hat_core.harness import Harness


@dataclass(frozen=True)
class HarnessVersion:
    """One stored harness version; `document` is the canonical JSON of the harness."""

    id: int
    line: str
    number: int
    content_hash: str
    document: str
    parent_id: int | None
    parent_number: int | None
    author: str
    note: str
    created_at: datetime

    def harness(self) -> Harness:
        """The stored harness as a `Harness`."""
        return Harness.model_validate(json.loads(self.document))


@dataclass(frozen=True)
class ChangeEvent:
    """An outbox row: a harness version was created and wants a retrain decision."""

    id: int
    kind: str
    harness_version_id: int
    payload: dict[str, Any]
    created_at: datetime
    claimed_at: datetime | None
    done_at: datetime | None


@dataclass(frozen=True)
class Job:
    """A retrain job for one (harness version, trigger kind)."""

    id: int
    harness_version_id: int
    trigger: str
    state: str
    reason: str
    attempts: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class StageRunInfo:
    """One stage of a job: its MLflow run, metric summary and artifacts."""

    id: int
    job_id: int
    stage: str
    mlflow_run_id: str
    metrics: dict[str, Any]
    artifact_uri: str
    created_at: datetime


@dataclass(frozen=True)
class ModelVersion:
    """A registered model version and the gate results it was registered with."""

    id: int
    registry_name: str
    version: str
    job_id: int | None
    mlflow_run_id: str
    gate_results: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class EvalResult:
    """One metric of one evaluation suite of a model version."""

    id: int
    model_version_id: int
    harness_version_id: int | None
    suite: str
    metric: str
    value: float
    cases_uri: str
    created_at: datetime


@dataclass(frozen=True)
class BadCase:
    """A failed episode and its review."""

    id: int
    episode: dict[str, Any]
    harness_version_id: int
    model_version_id: int | None
    failure_type: str
    judge_scores: dict[str, Any]
    review_state: str
    label: str
    comment: str
    send_to_training: bool
    reviewer: str
    reviewed_at: datetime | None
    created_at: datetime


@dataclass(frozen=True)
class Promotion:
    """A model version put into a slot; `previous_model_version_id` is what it replaced."""

    id: int
    slot: str
    model_version_id: int
    previous_model_version_id: int | None
    actor: str
    reason: str
    gate_snapshot: dict[str, Any]
    override: bool
    created_at: datetime


@dataclass(frozen=True)
class User:
    """A user and role; the password hash stays inside `db/`."""

    id: int
    name: str
    role: str
    created_at: datetime


@dataclass(frozen=True)
class AuditEntry:
    """One append-only audit record."""

    id: int
    actor: str
    action: str
    entity: str
    entity_id: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    created_at: datetime
