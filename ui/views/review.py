"""Bad-case review: the queue filter, the table rows and the reviewer's verdict.

Agreeing with the judge confirms its failure type; disagreeing names the correct type, or
`pass` (not a failure: the case is dismissed). "Send to training data" marks a reviewed case
for the next data build (`BadCase.send_to_training`).
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from db.badcases_repo import NOT_A_FAILURE, BadCaseFilter, label_bad_case
from db.values import BadCase, User
from ui.auth import require

__all__ = ["NOT_A_FAILURE", "case_rows", "label_case", "queue_filter", "review_decision",
           "training_state"]


def queue_filter(*, harness_version_id: int | None, model_version_id: int | None,
                 failure_type: str, review_state: str) -> BadCaseFilter:
    """The store filter of the queue's widgets ("any" means no condition)."""
    return BadCaseFilter(
        harness_version_id=harness_version_id, model_version_id=model_version_id,
        failure_type=None if failure_type == "any" else failure_type,
        review_state=None if review_state == "any" else review_state)


def case_rows(cases: list[BadCase]) -> list[dict]:
    """Queue rows: id, failure, state, label, training (`training_state`), the first viewer
    message."""
    return [{"id": c.id, "failure": c.failure_type, "state": c.review_state,
             "label": c.label, "training": training_state(c), "reviewer": c.reviewer,
             "viewer asked": _first_user_message(c.episode),
             "created": f"{c.created_at:%Y-%m-%d %H:%M}"} for c in cases]


def training_state(case: BadCase) -> str:
    """Where a case stands with training: `-` (not sent), `sent` (waiting for the next data
    build), or `in data <version>` (the build that consumed it, and its retrain job)."""
    if case.consumed_by_build:
        job = f" (job {case.consumed_by_job_id})" if case.consumed_by_job_id else ""
        return f"in data {case.consumed_by_build}{job}"
    return "sent" if case.send_to_training else "-"


def review_decision(judge_failure: str, *, agree: bool, correct_type: str) -> tuple[str, str]:
    """(review state, label) for a verdict on the judge's `judge_failure`."""
    if agree:
        return "confirmed", judge_failure
    if correct_type == NOT_A_FAILURE:
        return "dismissed", NOT_A_FAILURE
    return "confirmed", correct_type


def label_case(session: Session, *, user: User, case: BadCase, agree: bool, correct_type: str,
               comment: str, send_to_training: bool) -> BadCase:
    """Store the reviewer's verdict (reviewers, operators and admins)."""
    require(user.role, "bad_cases.label")
    state, label = review_decision(case.failure_type, agree=agree, correct_type=correct_type)
    return label_bad_case(session, bad_case_id=case.id, review_state=state, reviewer=user.name,
                          label=label, comment=comment, send_to_training=send_to_training)


def _first_user_message(episode: dict) -> str:
    for message in episode.get("messages") or episode.get("turns") or []:
        if message.get("role") == "user":
            return str(message.get("content", ""))[:80]
    return ""
