"""Harness versions: immutable, numbered 1, 2, 3 ... per harness line with no gaps.

`submit_harness` stores a new version (its change event in the outbox and an audit entry in
the same transaction) or returns the existing version with identical content. Numbering is
safe under concurrency: the line's counter row is locked (`SELECT ... FOR UPDATE` on
PostgreSQL; SQLite transactions start with `BEGIN IMMEDIATE`, so writers queue), and
UNIQUE (line, number) / (line, content_hash) back it up in the schema. There is no update or
delete; the database refuses them as well (triggers).
"""

from __future__ import annotations

from sqlalchemy import Select, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session, aliased

from db.audit_repo import record_audit
from db.errors import StoreError
from db.models import HarnessLine, HarnessVersionRow, OutboxEvent, utcnow
from db.rows import to_value
from db.values import HarnessVersion
from hat_core.errors import NotFoundError
from hat_core.harness.model import Harness

VERSION_CREATED = "harness.version.created"
_Parent = aliased(HarnessVersionRow)


def submit_harness(
    session: Session, *, harness: Harness, author: str, note: str = ""
) -> HarnessVersion:
    """Store `harness` as the next version of its line, or return the identical stored one."""
    content_hash = harness.content_hash()
    line = _lock_line(session, harness.harness)
    existing = _find(session, line.name, content_hash)
    if existing is not None:
        return existing
    parent = _row_by_number(session, line.id, line.last_number) if line.last_number else None
    line.last_number += 1
    row = HarnessVersionRow(
        line_id=line.id, number=line.last_number, content_hash=content_hash,
        document=harness.canonical_json(), parent_id=parent.id if parent else None,
        author=author, note=note, created_at=utcnow(),
    )
    session.add(row)
    session.flush()
    version = _value(row, line.name, parent.number if parent else None)
    _emit_created(session, version)
    record_audit(
        session, actor=author, action="harness.submit", entity="harness_version",
        entity_id=version.id, after=_audit_view(version),
    )
    return version


def get_version(session: Session, *, number: int, line: str | None = None) -> HarnessVersion:
    """Version `number` of `line` (of the only line when `line` is None)."""
    line = line or _only_line(session)
    query = _versions().where(HarnessLine.name == line, HarnessVersionRow.number == number)
    found = session.execute(query).first()
    if found is None:
        raise NotFoundError(f"harness line {line!r} has no version {number}")
    return _value(*found)


def get_version_by_id(session: Session, *, version_id: int) -> HarnessVersion:
    """The version with database id `version_id`."""
    found = session.execute(_versions().where(HarnessVersionRow.id == version_id)).first()
    if found is None:
        raise NotFoundError(f"no harness version with id {version_id}")
    return _value(*found)


def find_version_by_hash(
    session: Session, *, line: str, content_hash: str
) -> HarnessVersion | None:
    """The version of `line` whose content hash is `content_hash`, if stored."""
    return _find(session, line, content_hash)


def latest_version(session: Session, *, line: str) -> HarnessVersion | None:
    """The highest-numbered version of `line`, or None."""
    query = _versions().where(HarnessLine.name == line)
    found = session.execute(query.order_by(HarnessVersionRow.number.desc()).limit(1)).first()
    return _value(*found) if found else None


def list_versions(
    session: Session, *, line: str | None = None, limit: int = 50, before_id: int | None = None
) -> list[HarnessVersion]:
    """Newest versions first (all lines, or one); `before_id` pages further back."""
    query = _versions().order_by(HarnessVersionRow.id.desc()).limit(limit)
    if line is not None:
        query = query.where(HarnessLine.name == line)
    if before_id is not None:
        query = query.where(HarnessVersionRow.id < before_id)
    return [_value(*found) for found in session.execute(query)]


def list_lines(session: Session) -> list[str]:
    """The names of the harness lines, alphabetically."""
    return list(session.scalars(select(HarnessLine.name).order_by(HarnessLine.name)))


def count_versions(session: Session, *, line: str | None = None) -> int:
    """How many versions are stored (in one line, or in all)."""
    query = select(func.count()).select_from(HarnessVersionRow).join(HarnessLine)
    if line is not None:
        query = query.where(HarnessLine.name == line)
    return session.scalar(query) or 0


def _lock_line(session: Session, name: str) -> HarnessLine:
    """Create the line's counter row if needed and lock it for this transaction."""
    dialect = session.get_bind().dialect.name
    if dialect not in ("postgresql", "sqlite"):
        raise StoreError(f"unsupported database {dialect!r}; valid: postgresql, sqlite")
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    stmt = insert(HarnessLine).values(name=name, last_number=0, created_at=utcnow())
    session.execute(stmt.on_conflict_do_nothing(index_elements=["name"]))
    query = select(HarnessLine).where(HarnessLine.name == name).with_for_update()
    return session.scalars(query.execution_options(populate_existing=True)).one()


def _only_line(session: Session) -> str:
    lines = list_lines(session)
    if len(lines) == 1:
        return lines[0]
    if not lines:
        raise NotFoundError("no harness versions are stored yet; run `hat harness submit FILE`")
    raise StoreError(
        f"there are {len(lines)} harness lines; name one as LINE:N; valid: " + ", ".join(lines)
    )


def _find(session: Session, line: str, content_hash: str) -> HarnessVersion | None:
    query = _versions().where(
        HarnessLine.name == line, HarnessVersionRow.content_hash == content_hash
    )
    found = session.execute(query).first()
    return _value(*found) if found else None


def _row_by_number(session: Session, line_id: int, number: int) -> HarnessVersionRow:
    query = select(HarnessVersionRow).where(
        HarnessVersionRow.line_id == line_id, HarnessVersionRow.number == number
    )
    return session.scalars(query).one()


def _versions() -> Select:
    """Rows of (version, line name, parent number)."""
    return (
        select(HarnessVersionRow, HarnessLine.name, _Parent.number)
        .join(HarnessLine, HarnessVersionRow.line_id == HarnessLine.id)
        .outerjoin(_Parent, HarnessVersionRow.parent_id == _Parent.id)
    )


def _value(row: HarnessVersionRow, line: str, parent_number: int | None) -> HarnessVersion:
    return to_value(HarnessVersion, row, line=line, parent_number=parent_number)


def _emit_created(session: Session, version: HarnessVersion) -> None:
    payload = {
        "line": version.line, "number": version.number, "version_id": version.id,
        "content_hash": version.content_hash,
    }
    session.add(OutboxEvent(
        kind=VERSION_CREATED, harness_version_id=version.id, payload=payload,
        created_at=utcnow(),
    ))
    session.flush()


def _audit_view(version: HarnessVersion) -> dict:
    return {
        "line": version.line, "number": version.number, "content_hash": version.content_hash,
        "parent_number": version.parent_number, "author": version.author, "note": version.note,
    }
