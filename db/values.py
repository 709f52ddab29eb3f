"""The frozen values repository functions return; ORM rows never leave `db/`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hat_core.harness.model import Harness

if TYPE_CHECKING:  # the evidence package imports scipy; values stay cheap to import
    from hat_core.evidence.calibration import Calibration, LabelAgreement
    from hat_core.evidence.pairwise import PairwiseResult


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
    stage: str = ""
    retry_at: datetime | None = None
    history: list[dict[str, Any]] = field(default_factory=list)


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
    consumed_by_build: str | None = None  # the dataset version that took it into training
    consumed_by_job_id: int | None = None
    consumed_at: datetime | None = None


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
    """A user and role (and the SSO identity linked to it, if any); the password hash stays
    inside `db/`."""

    id: int
    name: str
    role: str
    created_at: datetime
    sso_identity: str | None = None


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


@dataclass(frozen=True)
class AbAnalysis:
    """A saved A/B analysis: which file (name, sha256), settings, `AbReport.to_dict()`."""

    id: int
    name: str
    source_name: str
    source_sha256: str
    control: str
    treatment: str
    metrics: list[str]
    n_rows: int
    n_users: int
    trustworthy: bool
    settings: dict[str, Any]
    result: dict[str, Any]
    created_by: str
    created_at: datetime


@dataclass(frozen=True)
class PairwiseReview:
    """A blind pairwise review as anyone may see it: no system identities, no seed.

    Which system is A and B, and the side each response is shown on, come only from
    `db.pairwise_repo.review_outcome`, which refuses while the review is open.
    """

    id: int
    title: str
    state: str
    n_items: int
    n_votes: int
    created_by: str
    created_at: datetime
    closed_by: str
    closed_at: datetime | None

    @property
    def is_open(self) -> bool:
        return self.state == "open"


@dataclass(frozen=True)
class BlindItem:
    """One item as a reviewer sees it: the scenario and two unlabelled responses."""

    id: int
    review_id: int
    position: int
    scenario_id: str
    prompt: str
    response_left: str
    response_right: str


@dataclass(frozen=True)
class PairwiseVote:
    """One reviewer's choice on one item: `left`, `right` or `tie` (the sides as shown)."""

    id: int
    review_id: int
    item_id: int
    reviewer: str
    choice: str
    comment: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class UnblindedItem:
    """One item after closing: which side showed A, the judge's verdict, each vote as a/b/tie."""

    item_id: int
    position: int
    scenario_id: str
    a_side: str
    judge_choice: str | None
    votes: tuple[tuple[str, str, str], ...]  # (reviewer, winner a|b|tie, comment)
    winner: str  # the majority of the votes (a, b or tie; an even split is a tie); "" if none


@dataclass(frozen=True)
class PairwiseOutcome:
    """A closed review unblinded: the systems, the seed, statistics by vote and by item."""

    review: PairwiseReview
    system_a: str
    system_b: str
    model_version_a_id: int | None
    model_version_b_id: int | None
    seed: int
    by_vote: PairwiseResult
    by_item: PairwiseResult
    items: tuple[UnblindedItem, ...]


@dataclass(frozen=True)
class JudgeCalibration:
    """The judge against human labels from one source (`bad_cases` or `pairwise`)."""

    source: str
    n: int
    calibration: Calibration | None  # None when no item has both labels
    agreement: tuple[LabelAgreement, ...]
    gate_ok: bool
    gate_reason: str


@dataclass(frozen=True)
class AbExperiment:
    """An A/B experiment of a serving slot as stored: its salt, split and creator."""

    id: int
    name: str
    slot: str
    salt: str
    treatment_share: float
    created_by: str
    created_at: datetime

    def assignment(self):
        """The experiment as the gateway assigns with it (`hat_core.serving.assignment`)."""
        from hat_core.serving.assignment import Experiment

        return Experiment(self.id, self.name, self.salt, self.treatment_share, self.slot)
