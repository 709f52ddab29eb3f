"""Blind pairwise reviews in the store: blinding, votes, closing, unblinding, audit, and the
database's own refusals (append-only items, a closed review is final), on both backends."""

from __future__ import annotations

import json
import random

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from db.audit_repo import list_audit
from db.engine import in_transaction
from db.errors import ReviewClosedError, StoreError
from db.pairwise_repo import (
    cast_vote,
    close_pairwise_review,
    closed_judge_pairs,
    create_pairwise_review,
    get_pairwise_review,
    list_blind_items,
    list_pairwise_reviews,
    list_votes,
    review_outcome,
)
from hat_core.evidence.errors import ReviewOpenError
from hat_core.evidence.pairwise import PairItem, blind_pairs
from hat_core.evidence.review_items import ReviewItem

SYSTEM_A, SYSTEM_B = "avatar-v7-secret", "production-v6-secret"
ITEMS = [ReviewItem(f"s{i}", f"prompt {i}", f"answer A{i}", f"answer B{i}",
                    judge=("a", "b", "tie", None)[i % 4]) for i in range(8)]


def create(sessions, seed=7, items=ITEMS):
    return in_transaction(sessions, lambda s: create_pairwise_review(
        s, title="v7 vs production", system_a=SYSTEM_A, system_b=SYSTEM_B, items=items,
        actor="olga", seed=seed))


def vote(sessions, item_id, reviewer, choice, comment=""):
    return in_transaction(sessions, lambda s: cast_vote(
        s, item_id=item_id, reviewer=reviewer, choice=choice, comment=comment))


def close(sessions, review_id, actor="olga"):
    return in_transaction(sessions, lambda s: close_pairwise_review(
        s, review_id=review_id, actor=actor))


def side_of(item, letter):
    """Which shown side holds system `letter`'s response (read from the text, as a human)."""
    return "left" if item.response_left.startswith(f"answer {letter.upper()}") else "right"


def test_blinding_follows_the_seed_and_hides_identities(sessions):
    review = create(sessions)
    with sessions() as s:
        items = list_blind_items(s, review_id=review.id)
        seen = [get_pairwise_review(s, review_id=review.id),
                *list_pairwise_reviews(s), *items, *list_votes(s, review_id=review.id),
                *list_audit(s, entity="pairwise_review")]
        with pytest.raises(ReviewOpenError, match="still open"):
            review_outcome(s, review_id=review.id)
    _, key = blind_pairs([PairItem(i.scenario_id, i.response_a, i.response_b) for i in ITEMS],
                         random.Random(7))
    assert [side_of(it, "a") for it in items] == [key.side_of_a(f"pair-{n:04d}")
                                                  for n in range(len(ITEMS))]
    assert {side_of(it, "a") for it in items} == {"left", "right"}  # both orders occur
    shown = json.dumps([repr(x) for x in seen])
    assert SYSTEM_A not in shown and SYSTEM_B not in shown
    assert "a_side" not in shown and "judge_choice" not in shown and "seed" not in shown
    assert (review.state, review.n_items, review.n_votes) == ("open", 8, 0)


def test_votes_close_and_unblind(sessions):
    review = create(sessions)
    with sessions() as s:
        items = list_blind_items(s, review_id=review.id)
    # rita prefers A on items 0-4, ties 5, prefers B on 6; item 7 unvoted; sam: A on 0, B on 1
    for n, it in enumerate(items[:7]):
        choice = "tie" if n == 5 else side_of(it, "a" if n < 5 else "b")
        vote(sessions, it.id, "rita", choice, comment=f"c{n}")
    vote(sessions, items[0].id, "sam", side_of(items[0], "a"))
    vote(sessions, items[1].id, "sam", side_of(items[1], "b"))
    changed = vote(sessions, items[6].id, "rita", "tie", comment="on second look")  # changes
    assert changed.choice == "tie"
    with sessions() as s:
        assert len(list_votes(s, review_id=review.id, reviewer="rita")) == 7
        assert get_pairwise_review(s, review_id=review.id).n_votes == 9
    closed = close(sessions, review.id)
    assert (closed.state, closed.closed_by) == ("closed", "olga") and closed.closed_at
    with sessions() as s:
        outcome = review_outcome(s, review_id=review.id)
    assert (outcome.system_a, outcome.system_b, outcome.seed) == (SYSTEM_A, SYSTEM_B, 7)
    v = outcome.by_vote
    assert (v.wins, v.ties, v.losses) == (6, 2, 1)
    assert v.p_value == pytest.approx(2 * 8 / 2**7)  # sign test: P(X <= 1 | n=7) * 2
    i = outcome.by_item  # item 1: a vs b -> tie; items 5, 6 ties; item 7 has no votes
    assert (i.wins, i.ties, i.losses) == (4, 3, 0)
    first = outcome.items[0]
    assert [w for _, w, _ in first.votes] == ["a", "a"] and first.winner == "a"
    assert outcome.items[7].votes == () and outcome.items[7].winner == ""


def test_a_closed_review_refuses_votes_and_a_second_close(sessions):
    review = create(sessions)
    with sessions() as s:
        item = list_blind_items(s, review_id=review.id)[0]
    vote(sessions, item.id, "rita", "left")
    close(sessions, review.id)
    with pytest.raises(ReviewClosedError, match="closed: no more votes"):
        vote(sessions, item.id, "rita", "right")
    with pytest.raises(ReviewClosedError, match="already closed"):
        close(sessions, review.id, actor="adam")
    with sessions() as s:
        assert [x.choice for x in list_votes(s, review_id=review.id)] == ["left"]


def test_audit_of_create_vote_close(sessions):
    review = create(sessions)
    with sessions() as s:
        item = list_blind_items(s, review_id=review.id)[2]
    vote(sessions, item.id, "rita", "tie", comment="same")
    close(sessions, review.id)
    with sessions() as s:
        entries = list_audit(s, entity="pairwise_review", entity_id=review.id)
    assert [e.action for e in entries] == ["pairwise_review.close", "pairwise_vote.cast",
                                           "pairwise_review.create"]
    assert [e.actor for e in entries] == ["olga", "rita", "olga"]
    assert entries[1].after == {"item_id": item.id, "choice": "tie", "comment": "same"}
    assert entries[0].after["system_a"] == SYSTEM_A and entries[0].after["seed"] == 7
    assert SYSTEM_A not in json.dumps(entries[2].after)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"title": " "}, "title is empty"),
    ({"system_b": SYSTEM_A}, "both"),
    ({"items": []}, "no items"),
])
def test_create_refuses_bad_input(sessions, kwargs, message):
    args = {"title": "t", "system_a": SYSTEM_A, "system_b": SYSTEM_B, "items": ITEMS,
            "actor": "olga", **kwargs}
    with pytest.raises(StoreError, match=message):
        in_transaction(sessions, lambda s: create_pairwise_review(s, **args))
    with sessions() as s:
        assert list_pairwise_reviews(s) == []


def test_vote_refuses_unknown_choice(sessions):
    review = create(sessions)
    with sessions() as s:
        item = list_blind_items(s, review_id=review.id)[0]
    with pytest.raises(StoreError, match="valid: left, right, tie"):
        vote(sessions, item.id, "rita", "a")


def test_judge_pairs_come_from_closed_reviews_only(sessions):
    open_review = create(sessions)
    done = create(sessions, seed=3)
    for review in (open_review, done):
        with sessions() as s:
            items = list_blind_items(s, review_id=review.id)
        for it in items[:4]:  # judges: a, b, tie, none; rita always picks A
            vote(sessions, it.id, "rita", side_of(it, "a"))
    close(sessions, done.id)
    with sessions() as s:
        assert closed_judge_pairs(s) == [("a", "a"), ("b", "a"), ("tie", "a")]


def test_list_by_state(sessions):
    first, second = create(sessions), create(sessions)
    close(sessions, first.id)
    with sessions() as s:
        assert [r.id for r in list_pairwise_reviews(s, state="open")] == [second.id]
        assert [r.id for r in list_pairwise_reviews(s)] == [second.id, first.id]
        with pytest.raises(StoreError, match="valid: open, closed"):
            list_pairwise_reviews(s, state="done")


@pytest.mark.parametrize("statement", [
    "UPDATE pairwise_items SET a_side = 'left'",
    "DELETE FROM pairwise_items",
])
def test_the_database_keeps_items_append_only(sessions, statement):
    create(sessions)
    with pytest.raises(DBAPIError, match="append-only"), sessions.begin() as s:
        s.execute(text(statement))


@pytest.mark.parametrize("statement", [
    "UPDATE pairwise_reviews SET state = 'open', closed_at = NULL",
    "DELETE FROM pairwise_reviews",
    "UPDATE pairwise_votes SET choice = 'right'",
    "DELETE FROM pairwise_votes",
    "INSERT INTO pairwise_votes (review_id, item_id, reviewer, choice, comment, created_at, "
    "updated_at) SELECT review_id, id, 'mallory', 'tie', '', created_at, created_at FROM "
    "pairwise_items p CROSS JOIN (SELECT CURRENT_TIMESTAMP AS created_at) t WHERE p.position = 1",
])
def test_the_database_keeps_a_closed_review_final(sessions, statement):
    review = create(sessions)
    with sessions() as s:
        item = list_blind_items(s, review_id=review.id)[0]
    vote(sessions, item.id, "rita", "left")
    close(sessions, review.id)
    with pytest.raises(DBAPIError, match="closed|final"), sessions.begin() as s:
        s.execute(text(statement))


def test_the_database_allows_votes_on_an_open_review(sessions):
    review = create(sessions)
    with sessions() as s:
        item = list_blind_items(s, review_id=review.id)[0]
    vote(sessions, item.id, "rita", "left")
    with sessions.begin() as s:
        s.execute(text("UPDATE pairwise_votes SET choice = 'right'"))
    with sessions() as s:
        assert list_votes(s, review_id=review.id)[0].choice == "right"
