"""Blind pairwise reviews: items shown left/right without labels, votes, closing, unblinding.

`create_pairwise_review` blinds the items with `hat_core.evidence.pairwise.blind_pairs`
(seeded; the seed is stored) and keeps which side shows system A in the item rows. While a
review is open, no read function here returns the systems, the seed, the side of A or the
judge's verdict: `get_pairwise_review`, `list_pairwise_reviews`, `list_blind_items` and
`list_votes` return only what a reviewer may see, and `review_outcome` raises
`ReviewOpenError`. Votes (`left`, `right` or `tie`, as shown) are refused on a closed review
(`ReviewClosedError`; the database refuses them too). Create, vote and close are audited;
the audit entries of an open review name no system.
"""

from __future__ import annotations

import random
import secrets
from collections import Counter, defaultdict
from collections.abc import Sequence

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.errors import ReviewClosedError, StoreError
from db.models import (
    PAIRWISE_CHOICES,
    PAIRWISE_STATES,
    PairwiseItemRow,
    PairwiseReviewRow,
    PairwiseVoteRow,
    utcnow,
)
from db.rows import snapshot, to_value
from db.values import BlindItem, PairwiseOutcome, PairwiseReview, PairwiseVote, UnblindedItem
from hat_core.errors import NotFoundError
from hat_core.evidence.errors import ReviewOpenError
from hat_core.evidence.review_items import ReviewItem


def create_pairwise_review(
    session: Session,
    *,
    title: str,
    system_a: str,
    system_b: str,
    items: Sequence[ReviewItem],
    actor: str,
    seed: int | None = None,
    model_version_a_id: int | None = None,
    model_version_b_id: int | None = None,
) -> PairwiseReview:
    """Open a review of `system_a` against `system_b` over `items`, blinded with `seed`.

    Without a seed one is drawn (`secrets`); it is stored, so the blinding can be re-derived
    after closing, and it is never shown while the review is open.
    """
    from hat_core.evidence.pairwise import PairItem, blind_pairs

    _check_new(title, system_a, system_b, items)
    seed = secrets.randbelow(2**31) if seed is None else seed
    pairs, key = blind_pairs([PairItem(i.scenario_id, i.response_a, i.response_b)
                              for i in items], random.Random(seed))
    row = PairwiseReviewRow(
        title=title.strip(), state="open", system_a=system_a.strip(),
        system_b=system_b.strip(), model_version_a_id=model_version_a_id,
        model_version_b_id=model_version_b_id, seed=seed, created_by=actor,
        created_at=utcnow(), closed_by="",
    )
    session.add(row)
    session.flush()
    session.add_all(
        PairwiseItemRow(review_id=row.id, position=n, scenario_id=pair.scenario_id,
                        prompt=item.prompt, response_left=pair.left, response_right=pair.right,
                        a_side=key.side_of_a(pair.pair_id), judge_choice=item.judge)
        for n, (pair, item) in enumerate(zip(pairs, items, strict=True))
    )
    session.flush()
    record_audit(session, actor=actor, action="pairwise_review.create",
                 entity="pairwise_review", entity_id=row.id,
                 after={"title": row.title, "n_items": len(items)})
    return get_pairwise_review(session, review_id=row.id)


def get_pairwise_review(session: Session, *, review_id: int) -> PairwiseReview:
    """The review (no identities), with its item and vote counts."""
    found = session.execute(_reviews().where(PairwiseReviewRow.id == review_id)).first()
    if found is None:
        raise NotFoundError(f"no pairwise review with id {review_id}")
    return _review(*found)


def list_pairwise_reviews(session: Session, *, state: str | None = None,
                          limit: int = 50) -> list[PairwiseReview]:
    """Reviews newest first, optionally in one state (`open` or `closed`)."""
    query = _reviews().order_by(PairwiseReviewRow.id.desc()).limit(limit)
    if state is not None:
        if state not in PAIRWISE_STATES:
            raise StoreError(f"unknown review state {state!r}; valid: "
                             f"{', '.join(PAIRWISE_STATES)}")
        query = query.where(PairwiseReviewRow.state == state)
    return [_review(*r) for r in session.execute(query)]


def list_blind_items(session: Session, *, review_id: int) -> list[BlindItem]:
    """The review's items in order, as reviewers see them (no side of A, no judge verdict)."""
    get_pairwise_review(session, review_id=review_id)
    rows = session.scalars(select(PairwiseItemRow).where(PairwiseItemRow.review_id == review_id)
                           .order_by(PairwiseItemRow.position))
    return [to_value(BlindItem, r) for r in rows]


def cast_vote(session: Session, *, item_id: int, reviewer: str, choice: str,
              comment: str = "") -> PairwiseVote:
    """Record (or, while the review is open, change) `reviewer`'s vote on one item."""
    if choice not in PAIRWISE_CHOICES:
        raise StoreError(f"unknown choice {choice!r}; valid: {', '.join(PAIRWISE_CHOICES)}")
    if not reviewer.strip():
        raise StoreError("a vote needs the reviewer's name")
    item = session.get(PairwiseItemRow, item_id)
    if item is None:
        raise NotFoundError(f"no pairwise item with id {item_id}")
    review = session.get(PairwiseReviewRow, item.review_id, with_for_update={"read": True})
    if review.state != "open":
        raise ReviewClosedError(f"pairwise review {review.id} is closed: no more votes")
    row = session.scalars(select(PairwiseVoteRow).where(
        PairwiseVoteRow.item_id == item_id, PairwiseVoteRow.reviewer == reviewer)).first()
    before = snapshot(row, "choice", "comment") if row else None
    if row is None:
        row = PairwiseVoteRow(review_id=review.id, item_id=item_id, reviewer=reviewer,
                              created_at=utcnow())
        session.add(row)
    row.choice, row.comment, row.updated_at = choice, comment, utcnow()
    session.flush()
    record_audit(session, actor=reviewer, action="pairwise_vote.cast", entity="pairwise_review",
                 entity_id=review.id, before=before,
                 after={"item_id": item_id, "choice": choice, "comment": comment})
    return to_value(PairwiseVote, row)


def list_votes(session: Session, *, review_id: int,
               reviewer: str | None = None) -> list[PairwiseVote]:
    """The votes on a review (as shown: left/right/tie), oldest first; optionally one reviewer's."""
    query = (select(PairwiseVoteRow).where(PairwiseVoteRow.review_id == review_id)
             .order_by(PairwiseVoteRow.id))
    if reviewer is not None:
        query = query.where(PairwiseVoteRow.reviewer == reviewer)
    return [to_value(PairwiseVote, r) for r in session.scalars(query)]


def close_pairwise_review(session: Session, *, review_id: int, actor: str) -> PairwiseReview:
    """Close the review: no more votes, and its outcome may now be unblinded."""
    row = session.get(PairwiseReviewRow, review_id, with_for_update=True)
    if row is None:
        raise NotFoundError(f"no pairwise review with id {review_id}")
    if row.state != "open":
        raise ReviewClosedError(f"pairwise review {review_id} is already closed "
                                f"(by {row.closed_by})")
    row.state, row.closed_by, row.closed_at = "closed", actor, utcnow()
    session.flush()
    record_audit(session, actor=actor, action="pairwise_review.close",
                 entity="pairwise_review", entity_id=review_id, before={"state": "open"},
                 after=snapshot(row, "state", "system_a", "system_b", "seed", "closed_at"))
    return get_pairwise_review(session, review_id=review_id)


def review_outcome(session: Session, *, review_id: int, alpha: float = 0.05) -> PairwiseOutcome:
    """The closed review unblinded: systems, seed, win/tie/loss of A by vote and by item.

    Raises `ReviewOpenError` while the review is open.
    """
    from hat_core.evidence.pairwise import pairwise_stats

    review = get_pairwise_review(session, review_id=review_id)
    if review.is_open:
        raise ReviewOpenError(f"pairwise review {review_id} is still open: close it before "
                              "unblinding")
    row = session.get(PairwiseReviewRow, review_id)
    items = _unblinded_items(session, review_id)
    by_vote = Counter(w for it in items for _, w, _ in it.votes)
    by_item = Counter(it.winner for it in items if it.winner)
    return PairwiseOutcome(
        review=review, system_a=row.system_a, system_b=row.system_b,
        model_version_a_id=row.model_version_a_id, model_version_b_id=row.model_version_b_id,
        seed=row.seed,
        by_vote=pairwise_stats(by_vote["a"], by_vote["tie"], by_vote["b"], alpha),
        by_item=pairwise_stats(by_item["a"], by_item["tie"], by_item["b"], alpha),
        items=tuple(items),
    )


def closed_judge_pairs(session: Session) -> list[tuple[str, str]]:
    """(judge verdict, human winner) for every vote on an item with a judge verdict, over
    closed reviews only (open reviews stay blind), each as `a`, `b` or `tie`."""
    query = (select(PairwiseItemRow.judge_choice, PairwiseItemRow.a_side, PairwiseVoteRow.choice)
             .join(PairwiseVoteRow, PairwiseVoteRow.item_id == PairwiseItemRow.id)
             .join(PairwiseReviewRow, PairwiseReviewRow.id == PairwiseItemRow.review_id)
             .where(PairwiseReviewRow.state == "closed",
                    PairwiseItemRow.judge_choice.is_not(None))
             .order_by(PairwiseVoteRow.id))
    return [(judge, _winner(choice, a_side)) for judge, a_side, choice in session.execute(query)]


def _unblinded_items(session: Session, review_id: int) -> list[UnblindedItem]:
    votes = defaultdict(list)
    for v in list_votes(session, review_id=review_id):
        votes[v.item_id].append(v)
    rows = session.scalars(select(PairwiseItemRow).where(PairwiseItemRow.review_id == review_id)
                           .order_by(PairwiseItemRow.position))
    out = []
    for r in rows:
        mapped = tuple((v.reviewer, _winner(v.choice, r.a_side), v.comment) for v in votes[r.id])
        out.append(UnblindedItem(r.id, r.position, r.scenario_id, r.a_side, r.judge_choice,
                                 mapped, _majority([w for _, w, _ in mapped])))
    return out


def _winner(choice: str, a_side: str) -> str:
    """A shown-side vote as a system: `a`, `b` or `tie` (hat_core.evidence.pairwise.unblind)."""
    return "tie" if choice == "tie" else ("a" if choice == a_side else "b")


def _majority(winners: list[str]) -> str:
    if not winners:
        return ""
    margin = winners.count("a") - winners.count("b")
    return "a" if margin > 0 else ("b" if margin < 0 else "tie")


def _reviews() -> Select:
    n_items = (select(func.count()).where(PairwiseItemRow.review_id == PairwiseReviewRow.id)
               .correlate(PairwiseReviewRow).scalar_subquery())
    n_votes = (select(func.count()).where(PairwiseVoteRow.review_id == PairwiseReviewRow.id)
               .correlate(PairwiseReviewRow).scalar_subquery())
    return select(PairwiseReviewRow, n_items, n_votes)


def _review(row: PairwiseReviewRow, n_items: int, n_votes: int) -> PairwiseReview:
    return to_value(PairwiseReview, row, n_items=n_items, n_votes=n_votes)


def _check_new(title: str, system_a: str, system_b: str, items: Sequence[ReviewItem]) -> None:
    problems = []
    if not title.strip():
        problems.append("the title is empty")
    if not system_a.strip() or not system_b.strip():
        problems.append("both systems need a name (a checkpoint or `production`)")
    elif system_a.strip() == system_b.strip():
        problems.append(f"system A and system B are both {system_a!r}")
    if not items:
        problems.append("no items")
    if problems:
        raise StoreError("cannot create the pairwise review: " + "; ".join(problems))
