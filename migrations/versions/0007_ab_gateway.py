"""A/B gateway tables: experiments (salt, split, slot), exposures (one row per request the
gateway served) and outcome events (per user, day and metric), on SQLite and PostgreSQL.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-05 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ab_experiments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("slot", sa.String(length=50), nullable=False),
        sa.Column("salt", sa.String(length=64), nullable=False),
        sa.Column("treatment_share", sa.Float(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("treatment_share > 0 AND treatment_share < 1",
                           name=op.f("ck_ab_experiments_treatment_share")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ab_experiments")),
        sa.UniqueConstraint("name", name=op.f("uq_ab_experiments_name")),
    )
    op.create_table(
        "exposures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("experiment_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=200), nullable=False),
        sa.Column("arm", sa.String(length=50), nullable=False),
        sa.Column("model_version", sa.String(length=250), nullable=False),
        sa.Column("model_version_id", sa.Integer(), nullable=True),
        sa.Column("harness_version", sa.String(length=50), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["experiment_id"], ["ab_experiments.id"],
                                name=op.f("fk_exposures_experiment_id_ab_experiments")),
        sa.ForeignKeyConstraint(["model_version_id"], ["model_versions.id"],
                                name=op.f("fk_exposures_model_version_id_model_versions")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_exposures")),
        sa.UniqueConstraint("request_id", name=op.f("uq_exposures_request_id")),
    )
    op.create_index("ix_exposures_experiment_user", "exposures",
                    ["experiment_id", "user_id", "id"])
    op.create_table(
        "outcomes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("experiment_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=200), nullable=False),
        sa.Column("day", sa.String(length=50), nullable=False),
        sa.Column("metric", sa.String(length=100), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["experiment_id"], ["ab_experiments.id"],
                                name=op.f("fk_outcomes_experiment_id_ab_experiments")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outcomes")),
        sa.UniqueConstraint("experiment_id", "user_id", "day", "metric",
                            name="uq_outcomes_experiment_user_day_metric"),
    )


def downgrade() -> None:
    op.drop_table("outcomes")
    op.drop_index("ix_exposures_experiment_user", table_name="exposures")
    op.drop_table("exposures")
    op.drop_table("ab_experiments")
