"""The change-event outbox: written with each new harness version, consumed by the
retrain trigger. Claim a batch, act on it, mark it done; a claim older than `stale_after`
(a consumer that died) can be claimed again, so delivery is at least once. The job table's
UNIQUE (version, trigger) makes acting twice harmless.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from db.models import OutboxEvent, utcnow
from db.rows import to_value
from db.values import ChangeEvent


def claim_outbox_events(
    session: Session, *, limit: int = 10, stale_after: timedelta = timedelta(minutes=10)
) -> list[ChangeEvent]:
    """Claim up to `limit` pending events, oldest first (PostgreSQL skips rows that other
    consumers hold locked)."""
    now = utcnow()
    query = (
        select(OutboxEvent)
        .where(OutboxEvent.done_at.is_(None))
        .where(or_(OutboxEvent.claimed_at.is_(None), OutboxEvent.claimed_at < now - stale_after))
        .order_by(OutboxEvent.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    rows = list(session.scalars(query))
    for row in rows:
        row.claimed_at = now
    session.flush()
    return [to_value(ChangeEvent, r) for r in rows]


def mark_outbox_done(session: Session, *, event_ids: Iterable[int]) -> int:
    """Mark claimed events as handled; returns how many were still pending."""
    ids = list(event_ids)
    if not ids:
        return 0
    stmt = (
        update(OutboxEvent)
        .where(OutboxEvent.id.in_(ids), OutboxEvent.done_at.is_(None))
        .values(done_at=utcnow())
    )
    return session.execute(stmt).rowcount


def list_outbox_events(
    session: Session, *, pending_only: bool = False, limit: int = 100
) -> list[ChangeEvent]:
    """Events, oldest first; only the unhandled ones with `pending_only`."""
    query = select(OutboxEvent).order_by(OutboxEvent.id).limit(limit)
    if pending_only:
        query = query.where(OutboxEvent.done_at.is_(None))
    return [to_value(ChangeEvent, r) for r in session.scalars(query)]
