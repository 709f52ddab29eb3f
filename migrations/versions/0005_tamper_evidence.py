"""Tamper evidence: the audit log's hash chain (prev_hash, entry_hash, filled in for every
existing entry), promotions append-only, and a model version's gate results fixed once
written; on SQLite and PostgreSQL.

The chain's hash is `db.audit_chain.entry_hash`, copied here as it was when this revision
was written (a migration must not change when the code does).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-05 12:10:00
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PG_GATES_FUNCTION = """
CREATE FUNCTION hat_refuse_gate_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR NEW.gate_results::text IS DISTINCT FROM OLD.gate_results::text THEN
        RAISE EXCEPTION 'model_versions: the gate results are fixed once written: % refused',
            TG_OP USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END;
$$
"""


def upgrade() -> None:
    with op.batch_alter_table("audit_log") as batch:
        batch.add_column(sa.Column("prev_hash", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("entry_hash", sa.String(length=64), nullable=True))
    _chain_existing_entries()
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE TRIGGER promotions_append_only BEFORE UPDATE OR DELETE ON promotions "
                   "FOR EACH ROW EXECUTE FUNCTION hat_refuse_change()")
        op.execute("CREATE TRIGGER promotions_no_truncate BEFORE TRUNCATE ON promotions "
                   "FOR EACH STATEMENT EXECUTE FUNCTION hat_refuse_change()")
        op.execute(PG_GATES_FUNCTION)
        op.execute("CREATE TRIGGER model_versions_gates_fixed BEFORE UPDATE OR DELETE ON "
                   "model_versions FOR EACH ROW EXECUTE FUNCTION hat_refuse_gate_change()")
        return
    for event in ("UPDATE", "DELETE"):
        op.execute(f"CREATE TRIGGER promotions_no_{event.lower()} BEFORE {event} ON promotions "
                   f"BEGIN SELECT RAISE(ABORT, 'promotions is append-only: {event} refused'); END")
    op.execute("CREATE TRIGGER model_versions_gates_fixed BEFORE UPDATE OF gate_results ON "
               "model_versions WHEN NEW.gate_results IS NOT OLD.gate_results BEGIN SELECT "
               "RAISE(ABORT, 'model_versions: the gate results are fixed once written'); END")
    op.execute("CREATE TRIGGER model_versions_no_delete BEFORE DELETE ON model_versions "
               "BEGIN SELECT RAISE(ABORT, 'model_versions: DELETE refused'); END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER model_versions_gates_fixed ON model_versions")
        op.execute("DROP FUNCTION hat_refuse_gate_change()")
        op.execute("DROP TRIGGER promotions_no_truncate ON promotions")
        op.execute("DROP TRIGGER promotions_append_only ON promotions")
    else:
        op.execute("DROP TRIGGER model_versions_no_delete")
        op.execute("DROP TRIGGER model_versions_gates_fixed")
        op.execute("DROP TRIGGER promotions_no_delete")
        op.execute("DROP TRIGGER promotions_no_update")
    _without_update_guard(lambda: None, drop_columns=True)


def _chain_existing_entries() -> None:
    _without_update_guard(_fill_hashes)


def _fill_hashes() -> None:
    bind = op.get_bind()
    log = sa.table("audit_log", sa.column("id", sa.Integer), sa.column("actor", sa.String),
                   sa.column("action", sa.String), sa.column("entity", sa.String),
                   sa.column("entity_id", sa.String), sa.column("before", sa.JSON),
                   sa.column("after", sa.JSON), sa.column("created_at", sa.DateTime(True)),
                   sa.column("prev_hash", sa.String), sa.column("entry_hash", sa.String))
    prev = ""
    for row in bind.execute(sa.select(log).order_by(log.c.id)).mappings().all():
        digest = _entry_hash(prev, row)
        bind.execute(log.update().where(log.c.id == row["id"])
                     .values(prev_hash=prev, entry_hash=digest))
        prev = digest


def _without_update_guard(work, drop_columns: bool = False) -> None:
    """Run `work` with audit_log's UPDATE guard lifted (the migration owns the table)."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only")
        work()
        if drop_columns:
            op.drop_column("audit_log", "entry_hash")
            op.drop_column("audit_log", "prev_hash")
        op.execute("ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only")
        return
    op.execute("DROP TRIGGER audit_log_no_update")
    op.execute("DROP TRIGGER audit_log_no_delete")
    work()
    if drop_columns:
        with op.batch_alter_table("audit_log") as batch:
            batch.drop_column("entry_hash")
            batch.drop_column("prev_hash")
    for event in ("UPDATE", "DELETE"):
        op.execute(f"CREATE TRIGGER audit_log_no_{event.lower()} BEFORE {event} ON audit_log "
                   f"BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: {event} refused'); END")


def _entry_hash(prev: str, row) -> str:
    created = row["created_at"]
    created = created.replace(tzinfo=UTC) if created.tzinfo is None else created.astimezone(UTC)
    doc = [prev, row["actor"], row["action"], row["entity"], str(row["entity_id"]),
           row["before"], row["after"], created.isoformat(timespec="microseconds")]
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
