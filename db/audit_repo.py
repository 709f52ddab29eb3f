"""The append-only audit log: every mutating repository function writes one entry here,
in the caller's transaction. There is no update or delete (the database refuses them too).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.models import AuditRow
from db.rows import to_value
from db.values import AuditEntry


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
    """Append an audit entry (flushed, committed with the caller's transaction)."""
    row = AuditRow(
        actor=actor, action=action, entity=entity, entity_id=str(entity_id),
        before=before, after=after,
    )
    session.add(row)
    session.flush()
    return to_value(AuditEntry, row)


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
