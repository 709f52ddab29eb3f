"""Bad cases: failed episodes queued for human review.

`list_bad_cases` filters by harness version, model version, failure type and review state
and pages by keyset (`after_id`: pass the last id of the previous page), newest first.
`label_bad_case` records the review: state, label, comment, and whether the corrected
episode goes back into training data.

`training_cases` is what a data build for a harness version reads: the cases sent to
training, reviewed (`confirmed` or `fixed`, label not `pass`), filed under that version or an
earlier one of its line, and not yet consumed; `mark_consumed` then records the build (its
dataset version, and the retrain job for the flow's data step). A case is consumed once: a
later build does not read it again, except a resumed run of the same job, which rebuilds the
same data (docs/data.md, "Bad cases sent to training").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, or_, select
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.errors import StoreError
from db.models import REVIEW_STATES, BadCaseRow, HarnessVersionRow, utcnow
from db.rows import snapshot, to_value
from db.values import BadCase
from hat_core.errors import NotFoundError

_REVIEW = ("review_state", "label", "comment", "send_to_training", "reviewer")
_CONSUMED = ("consumed_by_build", "consumed_by_job_id")
TRAINABLE_STATES = ("confirmed", "fixed")
NOT_A_FAILURE = "pass"  # the label of a dismissed case: the judge was wrong


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


def training_cases(session: Session, *, harness_version_id: int,
                   job_id: int | None = None) -> list[BadCase]:
    """The cases a data build for `harness_version_id` takes (module doc), oldest first;
    with `job_id`, also those that job's data step consumed already (a resumed run)."""
    version = session.get(HarnessVersionRow, harness_version_id)
    if version is None:
        raise NotFoundError(f"no harness version with id {harness_version_id}")
    earlier = select(HarnessVersionRow.id).where(HarnessVersionRow.line_id == version.line_id,
                                                 HarnessVersionRow.number <= version.number)
    query = select(BadCaseRow).where(
        BadCaseRow.send_to_training.is_(True), BadCaseRow.review_state.in_(TRAINABLE_STATES),
        BadCaseRow.label != NOT_A_FAILURE, BadCaseRow.harness_version_id.in_(earlier),
        _unconsumed(job_id)).order_by(BadCaseRow.id)
    return [to_value(BadCase, r) for r in session.scalars(query)]


def mark_consumed(session: Session, *, bad_case_ids: list[int], build: str,
                  job_id: int | None = None, actor: str = "data build") -> list[int]:
    """Record that dataset `build` took these cases into training; the ids marked (a case
    another build consumed first keeps its build; its own job's may mark it again)."""
    query = select(BadCaseRow).where(BadCaseRow.id.in_(bad_case_ids), _unconsumed(job_id))
    marked = []
    for row in session.scalars(query.order_by(BadCaseRow.id).with_for_update()):
        before = snapshot(row, *_CONSUMED)
        row.consumed_by_build, row.consumed_by_job_id = build, job_id
        row.consumed_at = utcnow()
        record_audit(session, actor=actor, action="bad_case.consume", entity="bad_case",
                     entity_id=row.id, before=before, after=snapshot(row, *_CONSUMED))
        marked.append(row.id)
    session.flush()
    return marked


def _unconsumed(job_id: int | None):
    if job_id is None:
        return BadCaseRow.consumed_by_build.is_(None)
    return or_(BadCaseRow.consumed_by_build.is_(None), BadCaseRow.consumed_by_job_id == job_id)


def _filtered(query: Select, where: BadCaseFilter) -> Select:
    for column in ("harness_version_id", "model_version_id", "failure_type", "review_state"):
        value = getattr(where, column)
        if value is not None:
            query = query.where(getattr(BadCaseRow, column) == value)
    return query
