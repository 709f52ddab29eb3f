"""The audit log's hash chain: each entry carries the hash of the one before it.

    entry_hash(prev, actor=..., action=..., entity=..., entity_id=..., before=..., after=...,
               created_at=...)          # sha256 hex of the canonical entry and `prev`
    report = verify_chain(session)     # every break, the number of entries, the head hash
    anchor = report.anchor()           # (entries, head id, head hash): kept outside the store
    verify_chain(session, anchor=anchor).problems   # the anchored head must still be there

`db.audit_repo.record_audit` writes `prev_hash` (the newest entry's `entry_hash`, "" for the
first) and `entry_hash`, one writer at a time (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: a
transaction advisory lock). An entry changed in place no longer matches its hash; a deleted
entry breaks the link of the one after it, so a deletion made even by a superuser who
bypassed the append-only triggers is found. Deleting the newest entries leaves a shorter
valid chain: an anchor kept outside the database (`hat audit anchor --out FILE`: the number
of entries, the newest id and its hash) catches that, because a later `verify_chain(...,
anchor=...)` must find that entry, with that hash, after that many entries.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.models import AuditRow

BATCH = 1000


@dataclass(frozen=True)
class ChainReport:
    """What `verify_chain` found: the entries read, the newest hash, every break."""

    entries: int
    head: str
    problems: tuple[str, ...]
    head_id: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def anchor(self) -> AuditAnchor:
        """This chain's head as an anchor (only of an intact chain)."""
        if not self.ok:
            raise ValueError("an anchor of a broken chain would vouch for the break")
        return AuditAnchor(entries=self.entries, head_id=self.head_id, head=self.head)


@dataclass(frozen=True)
class AuditAnchor:
    """The head of the chain at one moment, kept outside the database: the number of entries,
    the id of the newest one and its hash."""

    entries: int
    head_id: int
    head: str


def entry_hash(prev: str, *, actor: str, action: str, entity: str, entity_id: str,
               before: Any, after: Any, created_at: datetime) -> str:
    """The sha256 (hex) of an audit entry's canonical JSON together with `prev`."""
    doc = [prev, actor, action, entity, str(entity_id), before, after, _utc(created_at)]
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def row_hash(row: AuditRow, prev: str) -> str:
    """`entry_hash` of a stored row, on top of `prev`."""
    return entry_hash(prev, actor=row.actor, action=row.action, entity=row.entity,
                      entity_id=row.entity_id, before=row.before, after=row.after,
                      created_at=row.created_at)


def verify_chain(session: Session, *, anchor: AuditAnchor | None = None) -> ChainReport:
    """Walk the whole log in id order and list every entry whose link or hash is wrong; with
    an `anchor`, also whether its head entry is still there, unchanged, after as many entries
    (so removing the newest entries, which leaves a valid shorter chain, is found)."""
    problems: list[str] = []
    prev, count, last_id = "", 0, 0
    at_anchor: tuple[int, str] | None = None
    while True:
        rows = session.scalars(select(AuditRow).where(AuditRow.id > last_id)
                               .order_by(AuditRow.id).limit(BATCH)).all()
        if not rows:
            break
        for row in rows:
            count += 1
            if row.prev_hash != prev:
                problems.append(f"entry {row.id}: its link does not match the entry before it "
                                f"(id {last_id or 'none'}): an entry was removed or reordered")
            if row.entry_hash != row_hash(row, row.prev_hash or ""):
                problems.append(f"entry {row.id}: its content does not match its hash: "
                                "it was changed after it was written")
            prev, last_id = row.entry_hash or "", row.id
            if anchor is not None and row.id == anchor.head_id:
                at_anchor = (count, prev)
    if anchor is not None:
        problems += _anchor_problems(anchor, at_anchor, count, last_id)
    return ChainReport(count, prev, tuple(problems), last_id)


def _anchor_problems(anchor: AuditAnchor, found: tuple[int, str] | None, count: int,
                     last_id: int) -> list[str]:
    if anchor.head_id == 0:  # anchored an empty log: anything since is newer
        return []
    if found is None:
        return [f"anchor: its head, entry {anchor.head_id} of {anchor.entries}, is not in the "
                f"log (newest now: {last_id or 'none'}, {count} entries): entries up to it "
                "were removed"]
    out = []
    position, digest = found
    if digest != anchor.head:
        out.append(f"anchor: entry {anchor.head_id} has hash {digest[:16]}..., not the "
                   f"anchored {anchor.head[:16]}...: the log up to it was changed")
    if position != anchor.entries:
        out.append(f"anchor: entry {anchor.head_id} is entry number {position} of the log, "
                   f"not {anchor.entries}: entries before it were removed or added")
    return out


def _utc(value: datetime) -> str:
    moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return moment.isoformat(timespec="microseconds")
