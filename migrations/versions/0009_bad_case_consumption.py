"""Bad cases sent to training remember the data build that took them: `bad_cases` gains
`consumed_by_build` (the dataset version), `consumed_by_job_id` (the retrain job whose data
step built it; none for `hat data build`) and `consumed_at`, on SQLite and PostgreSQL.

SQLite cannot add a foreign key to an existing table: the batch mode copies `bad_cases`
(`migrations/env.py` runs SQLite migrations with foreign keys off and checks them after).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-07 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FK = "fk_bad_cases_consumed_by_job_id_retrain_jobs"


def upgrade() -> None:
    with op.batch_alter_table("bad_cases") as batch:
        batch.add_column(sa.Column("consumed_by_build", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("consumed_by_job_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("consumed_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_foreign_key(op.f(FK), "retrain_jobs", ["consumed_by_job_id"], ["id"])


def downgrade() -> None:
    with op.batch_alter_table("bad_cases") as batch:
        batch.drop_constraint(op.f(FK), type_="foreignkey")
        batch.drop_column("consumed_at")
        batch.drop_column("consumed_by_job_id")
        batch.drop_column("consumed_by_build")
