"""The change-event outbox: claim, mark done, reclaim stale claims."""

from __future__ import annotations

from datetime import timedelta

from store_helpers import variant

from db.engine import in_transaction
from db.harness_repo import submit_harness
from db.outbox_repo import claim_outbox_events, list_outbox_events, mark_outbox_done


def test_claim_then_done(sessions):
    for i in range(3):
        in_transaction(sessions, lambda s, i=i: submit_harness(s, harness=variant(i), author="a"))
    first = in_transaction(sessions, lambda s: claim_outbox_events(s, limit=2))
    assert [e.payload["number"] for e in first] == [1, 2]
    assert all(e.claimed_at is not None for e in first)
    second = in_transaction(sessions, lambda s: claim_outbox_events(s, limit=5))
    assert [e.payload["number"] for e in second] == [3]
    ids = [e.id for e in first + second]
    assert in_transaction(sessions, lambda s: mark_outbox_done(s, event_ids=ids)) == 3
    assert in_transaction(sessions, lambda s: mark_outbox_done(s, event_ids=ids)) == 0
    with sessions() as s:
        assert list_outbox_events(s, pending_only=True) == []


def test_a_stale_claim_is_claimed_again(sessions):
    in_transaction(sessions, lambda s: submit_harness(s, harness=variant(1), author="a"))
    (event,) = in_transaction(sessions, lambda s: claim_outbox_events(s, limit=5))
    assert in_transaction(sessions, lambda s: claim_outbox_events(s, limit=5)) == []
    again = in_transaction(
        sessions, lambda s: claim_outbox_events(s, limit=5, stale_after=timedelta(0))
    )
    assert [e.id for e in again] == [event.id]
