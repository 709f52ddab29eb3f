"""Login throttles (login_throttles) on SQLite and PostgreSQL: failed logins per user name
and per client in a window, and the end of a lockout, kept in the store so that a restart
of the console does not reset them.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-05 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "login_throttles",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_login_throttles")),
    )


def downgrade() -> None:
    op.drop_table("login_throttles")
