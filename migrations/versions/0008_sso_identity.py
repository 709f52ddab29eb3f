"""Single sign-on: `users.sso_identity`, the identity (an OIDC claim's value: an e-mail
address or a subject) that logs in as that user through the console's SSO, unique when set,
on SQLite and PostgreSQL.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-06 04:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("users", sa.Column("sso_identity", sa.String(length=320), nullable=True))
    op.create_index(op.f("ix_users_sso_identity"), "users", ["sso_identity"], unique=True)


def downgrade() -> None:
    op.drop_index(op.f("ix_users_sso_identity"), table_name="users")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("sso_identity")
