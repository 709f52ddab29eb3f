"""Interrupted retrain jobs: the state `interrupted`, the stage a job reached (`stage`), when
an interrupted job may resume (`retry_at`, the backoff) and the job's history of stops
(`history`, a JSON list); on SQLite and PostgreSQL.

SQLite cannot change a CHECK constraint in place: the batch mode copies `retrain_jobs` into a
new table while `stage_runs` and `model_versions` point at it (`migrations/env.py` runs
SQLite migrations with foreign keys off and checks them after).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_STATES = ("queued", "running", "succeeded", "failed", "skipped")
NEW_STATES = (*OLD_STATES, "interrupted")


def _check(states: tuple[str, ...]) -> str:
    return f"state IN ({', '.join(repr(s) for s in states)})"


def _replace_state_check(states: tuple[str, ...]) -> None:
    with op.batch_alter_table("retrain_jobs") as batch:
        batch.drop_constraint(op.f("ck_retrain_jobs_state"), type_="check")
        batch.create_check_constraint("state", _check(states))


def upgrade() -> None:
    with op.batch_alter_table("retrain_jobs") as batch:
        batch.add_column(sa.Column("stage", sa.String(length=50), nullable=False,
                                   server_default=""))
        batch.add_column(sa.Column("retry_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("history", sa.JSON(), nullable=False,
                                   server_default="[]"))
    _replace_state_check(NEW_STATES)


def downgrade() -> None:
    op.execute("UPDATE retrain_jobs SET state = 'failed' WHERE state = 'interrupted'")
    _replace_state_check(OLD_STATES)
    with op.batch_alter_table("retrain_jobs") as batch:
        batch.drop_column("history")
        batch.drop_column("retry_at")
        batch.drop_column("stage")
