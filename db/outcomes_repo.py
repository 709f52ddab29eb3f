"""Outcome events of an A/B experiment: a metric's value per user per day.

`add_outcomes` stores a batch in one transaction, all or nothing: a (user, day, metric) the
experiment already has is refused, named, and nothing of the batch is written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sqlalchemy import insert, select, tuple_
from sqlalchemy.orm import Session

from db.errors import StoreError
from db.models import OutcomeRow, utcnow
from hat_core.errors import Problem
from hat_core.evidence.ab_events import OutcomeEvent

LISTED = 5
CHUNK = 500


def add_outcomes(session: Session, *, experiment_id: int,
                 events: Sequence[OutcomeEvent]) -> int:
    """Insert the events; `StoreError` naming the repeats when any is already stored (or
    repeated within the batch)."""
    keys = [(e.user_id, e.day, e.metric) for e in events]
    repeats = sorted(k for k, n in Counter(keys).items() if n > 1)
    repeats += _stored(session, experiment_id, keys)
    if repeats:
        problems = [Problem(f"user {u}, day {d}", f"metric {m} is already recorded")
                    for u, d, m in repeats[:LISTED]]
        raise StoreError(f"{len(repeats)} outcome(s) already recorded for experiment "
                         f"{experiment_id}; nothing was stored", problems)
    now = utcnow()
    session.execute(insert(OutcomeRow), [
        {"experiment_id": experiment_id, "user_id": e.user_id, "day": e.day,
         "metric": e.metric, "value": float(e.value), "created_at": now} for e in events])
    return len(events)


def _stored(session: Session, experiment_id: int, keys: list[tuple[str, str, str]]) -> list:
    found = []
    cols = tuple_(OutcomeRow.user_id, OutcomeRow.day, OutcomeRow.metric)
    for start in range(0, len(keys), CHUNK):
        query = (select(OutcomeRow.user_id, OutcomeRow.day, OutcomeRow.metric)
                 .where(OutcomeRow.experiment_id == experiment_id,
                        cols.in_(keys[start:start + CHUNK])))
        found += [tuple(r) for r in session.execute(query)]
    return found


def list_outcomes(session: Session, *, experiment_id: int) -> list[OutcomeEvent]:
    """Every outcome event of the experiment, in the order they were recorded."""
    query = (select(OutcomeRow).where(OutcomeRow.experiment_id == experiment_id)
             .order_by(OutcomeRow.id))
    return [OutcomeEvent(r.user_id, r.day, r.metric, r.value) for r in session.scalars(query)]
