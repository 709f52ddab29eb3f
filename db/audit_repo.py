"""The append-only audit log: every mutating repository function writes one entry here,
in the caller's transaction. There is no update or delete (the database refuses them too),
and each entry carries the hash of the one before it (`db.audit_chain`), so `hat audit
verify` finds an entry changed or removed behind the triggers' back.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from db.audit_chain import entry_hash
from db.models import AuditRow, utcnow
from db.rows import to_value
from db.values import AuditEntry

AUDIT_LOCK = 0x4A7_A0D1  # the advisory lock key of the audit chain (any constant)


def record_audit(
    session: Session,
    *,
    actor: str,
    action: str,
    entity: str,
    entity_id: Any,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append an audit entry, chained to the newest one (flushed, committed with the caller's
    transaction; audit writers take turns until it commits)."""
    _take_turn(session)
    prev = session.scalar(select(AuditRow.entry_hash).order_by(AuditRow.id.desc()).limit(1))
    created_at = utcnow()
    fields = dict(actor=actor, action=action, entity=entity, entity_id=str(entity_id),
                  before=before, after=after, created_at=created_at)
    row = AuditRow(**fields, prev_hash=prev or "", entry_hash=entry_hash(prev or "", **fields))
    session.add(row)
    session.flush()
    return to_value(AuditEntry, row)


def _take_turn(session: Session) -> None:
    # PostgreSQL: one audit writer at a time until commit, so two entries never share a
    # predecessor. SQLite transactions start with BEGIN IMMEDIATE: already one writer.
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": AUDIT_LOCK})


def list_audit(
    session: Session,
    *,
    entity: str | None = None,
    entity_id: Any = None,
    limit: int = 100,
) -> list[AuditEntry]:
    """The newest entries first, optionally for one entity kind (and one id)."""
    query = select(AuditRow).order_by(AuditRow.id.desc()).limit(limit)
    if entity is not None:
        query = query.where(AuditRow.entity == entity)
    if entity_id is not None:
        query = query.where(AuditRow.entity_id == str(entity_id))
    return [to_value(AuditEntry, r) for r in session.scalars(query)]
