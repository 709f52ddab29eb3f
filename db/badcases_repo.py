"""Bad cases: failed episodes queued for human review.

`list_bad_cases` filters by harness version, model version, failure type and review state
and pages by keyset (`after_id`: pass the last id of the previous page), newest first.
`label_bad_case` records the review: state, label, comment, and whether the corrected
episode goes back into training data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.errors import StoreError
from db.models import REVIEW_STATES, BadCaseRow, utcnow
from db.rows import snapshot, to_value
from db.values import BadCase
from hat_core.errors import NotFoundError

_REVIEW = ("review_state", "label", "comment", "send_to_training", "reviewer")


@dataclass(frozen=True)
class BadCaseFilter:
    """Which bad cases to list; None means any."""

    harness_version_id: int | None = None
    model_version_id: int | None = None
    failure_type: str | None = None
    review_state: str | None = None


def add_bad_case(
    session: Session,
    *,
    episode: dict[str, Any],
    harness_version_id: int,
    failure_type: str,
    model_version_id: int | None = None,
    judge_scores: dict[str, Any] | None = None,
    actor: str = "system",
) -> BadCase:
    """Queue a failed episode for review (state `new`)."""
    row = BadCaseRow(
        episode=episode, harness_version_id=harness_version_id,
        model_version_id=model_version_id, failure_type=failure_type,
        judge_scores=judge_scores or {}, review_state="new", label="", comment="",
        send_to_training=False, reviewer="", created_at=utcnow(),
    )
    session.add(row)
    session.flush()
    record_audit(
        session, actor=actor, action="bad_case.add", entity="bad_case", entity_id=row.id,
        after=snapshot(row, "harness_version_id", "model_version_id", "failure_type"),
    )
    return to_value(BadCase, row)


def get_bad_case(session: Session, *, bad_case_id: int) -> BadCase:
    """The bad case with id `bad_case_id`."""
    row = session.get(BadCaseRow, bad_case_id)
    if row is None:
        raise NotFoundError(f"no bad case with id {bad_case_id}")
    return to_value(BadCase, row)


def list_bad_cases(
    session: Session,
    *,
    where: BadCaseFilter = BadCaseFilter(),
    after_id: int | None = None,
    limit: int = 50,
) -> list[BadCase]:
    """One page of matching bad cases, newest first; next page: `after_id=page[-1].id`."""
    query = _filtered(select(BadCaseRow), where).order_by(BadCaseRow.id.desc()).limit(limit)
    if after_id is not None:
        query = query.where(BadCaseRow.id < after_id)
    return [to_value(BadCase, r) for r in session.scalars(query)]


def count_bad_cases(session: Session, *, where: BadCaseFilter = BadCaseFilter()) -> int:
    """How many bad cases match."""
    return session.scalar(_filtered(select(func.count()).select_from(BadCaseRow), where)) or 0


def label_bad_case(
    session: Session,
    *,
    bad_case_id: int,
    review_state: str,
    reviewer: str,
    label: str = "",
    comment: str = "",
    send_to_training: bool = False,
) -> BadCase:
    """Record a reviewer's verdict on a bad case."""
    if review_state not in REVIEW_STATES:
        valid = ", ".join(REVIEW_STATES)
        raise StoreError(f"unknown review state {review_state!r}; valid: {valid}")
    row = session.get(BadCaseRow, bad_case_id, with_for_update=True)
    if row is None:
        raise NotFoundError(f"no bad case with id {bad_case_id}")
    before = snapshot(row, *_REVIEW)
    row.review_state, row.label, row.comment = review_state, label, comment
    row.send_to_training, row.reviewer, row.reviewed_at = send_to_training, reviewer, utcnow()
    session.flush()
    record_audit(
        session, actor=reviewer, action="bad_case.label", entity="bad_case",
        entity_id=bad_case_id, before=before, after=snapshot(row, *_REVIEW),
    )
    return to_value(BadCase, row)


def _filtered(query: Select, where: BadCaseFilter) -> Select:
    for column in ("harness_version_id", "model_version_id", "failure_type", "review_state"):
        value = getattr(where, column)
        if value is not None:
            query = query.where(getattr(BadCaseRow, column) == value)
    return query
