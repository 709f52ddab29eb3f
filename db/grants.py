"""What the application's PostgreSQL role may do: read and add rows everywhere, change only
the rows the application changes, and never change or remove a release record.

    grant_app_role(owner_url, "hat_app")     # run as the tables' owner after each upgrade

The application connects as that role (compose: `hat_app`), which owns no table and is no
superuser, so it can neither UPDATE or DELETE the append-only tables (`APPEND_ONLY`: the
audit log, promotions, harness versions, ...), nor disable their triggers, nor set
`session_replication_role`. Migrations run as the owner (`hat db upgrade --grant ROLE`).
Every table is in exactly one of `APPEND_ONLY` and `MUTABLE` (a test checks it), so a new
table needs a decision here.
"""

from __future__ import annotations

import re

from sqlalchemy.engine import make_url

from db.engine import make_engine
from db.errors import StoreError

# tables the application only reads and appends to
APPEND_ONLY = ("audit_log", "promotions", "harness_versions", "model_versions", "eval_results",
               "stage_runs", "ab_analyses", "pairwise_items", "ab_experiments", "exposures",
               "outcomes")
# tables the application changes rows of: table -> what beyond SELECT and INSERT
MUTABLE = {
    "harness_lines": "UPDATE", "outbox_events": "UPDATE", "retrain_jobs": "UPDATE",
    "bad_cases": "UPDATE", "pairwise_reviews": "UPDATE", "pairwise_votes": "UPDATE",
    "users": "UPDATE, DELETE", "user_sessions": "UPDATE, DELETE",
    "login_throttles": "UPDATE, DELETE",
}
ROLE_PATTERN = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def grant_statements(role: str) -> list[str]:
    """The SQL that gives `role` exactly the application's privileges (and no others)."""
    if not ROLE_PATTERN.fullmatch(role):
        raise StoreError(f"invalid role name {role!r}: lower-case letters, digits and '_'")
    quoted = f'"{role}"'
    out = [f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {quoted}",
           f"GRANT USAGE ON SCHEMA public TO {quoted}",
           f"GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO {quoted}",
           f"REVOKE INSERT ON alembic_version FROM {quoted}",
           f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {quoted}"]
    out += [f"GRANT {what} ON {table} TO {quoted}" for table, what in MUTABLE.items()]
    return out


def grant_app_role(url: str, role: str) -> None:
    """Give the existing PostgreSQL role `role` the application's privileges on the database
    at `url` (connected as the tables' owner); refuses other databases."""
    if make_url(url).get_backend_name() != "postgresql":
        raise StoreError("an application role is for PostgreSQL only; the embedded SQLite "
                         "store is protected by its file mode")
    statements = grant_statements(role)
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for sql in statements:
                conn.exec_driver_sql(sql)
    finally:
        engine.dispose()
