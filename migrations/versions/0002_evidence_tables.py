"""Evidence tables: saved A/B analyses, blind pairwise reviews, their items and votes;
append-only triggers on ab_analyses and pairwise_items, and a closed review is final (its
row, and the votes on it, refuse UPDATE/DELETE/INSERT) on SQLite and PostgreSQL.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02 20:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ab_analyses",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("source_name", sa.String(length=500), nullable=False),
        sa.Column("source_sha256", sa.String(length=64), nullable=False),
        sa.Column("control", sa.String(length=100), nullable=False),
        sa.Column("treatment", sa.String(length=100), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("n_rows", sa.Integer(), nullable=False),
        sa.Column("n_users", sa.Integer(), nullable=False),
        sa.Column("trustworthy", sa.Boolean(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ab_analyses")),
    )
    op.create_index("ix_ab_analyses_source_sha256", "ab_analyses", ["source_sha256"])
    op.create_table(
        "pairwise_reviews",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("system_a", sa.String(length=200), nullable=False),
        sa.Column("system_b", sa.String(length=200), nullable=False),
        sa.Column("model_version_a_id", sa.Integer(), nullable=True),
        sa.Column("model_version_b_id", sa.Integer(), nullable=True),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_by", sa.String(length=200), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("state IN ('open', 'closed')", name=op.f("ck_pairwise_reviews_state")),
        sa.ForeignKeyConstraint(
            ["model_version_a_id"], ["model_versions.id"],
            name=op.f("fk_pairwise_reviews_model_version_a_id_model_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["model_version_b_id"], ["model_versions.id"],
            name=op.f("fk_pairwise_reviews_model_version_b_id_model_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pairwise_reviews")),
    )
    op.create_index("ix_pairwise_reviews_state_id", "pairwise_reviews", ["state", "id"])
    op.create_table(
        "pairwise_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("review_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("scenario_id", sa.String(length=200), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("response_left", sa.Text(), nullable=False),
        sa.Column("response_right", sa.Text(), nullable=False),
        sa.Column("a_side", sa.String(length=5), nullable=False),
        sa.Column("judge_choice", sa.String(length=5), nullable=True),
        sa.CheckConstraint("a_side IN ('left', 'right')", name=op.f("ck_pairwise_items_a_side")),
        sa.CheckConstraint("judge_choice IS NULL OR judge_choice IN ('a', 'b', 'tie')",
                           name=op.f("ck_pairwise_items_judge_choice")),
        sa.ForeignKeyConstraint(["review_id"], ["pairwise_reviews.id"],
                                name=op.f("fk_pairwise_items_review_id_pairwise_reviews")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pairwise_items")),
        sa.UniqueConstraint("review_id", "position", name="uq_pairwise_items_review_position"),
        sa.UniqueConstraint("review_id", "scenario_id", name="uq_pairwise_items_review_scenario"),
    )
    op.create_table(
        "pairwise_votes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("review_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(length=200), nullable=False),
        sa.Column("choice", sa.String(length=5), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("choice IN ('left', 'right', 'tie')",
                           name=op.f("ck_pairwise_votes_choice")),
        sa.ForeignKeyConstraint(["item_id"], ["pairwise_items.id"],
                                name=op.f("fk_pairwise_votes_item_id_pairwise_items")),
        sa.ForeignKeyConstraint(["review_id"], ["pairwise_reviews.id"],
                                name=op.f("fk_pairwise_votes_review_id_pairwise_reviews")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pairwise_votes")),
        sa.UniqueConstraint("item_id", "reviewer", name="uq_pairwise_votes_item_reviewer"),
    )
    op.create_index("ix_pairwise_votes_review_id", "pairwise_votes", ["review_id", "id"])
    _create_triggers()


def downgrade() -> None:
    _drop_triggers()
    op.drop_index("ix_pairwise_votes_review_id", table_name="pairwise_votes")
    op.drop_table("pairwise_votes")
    op.drop_table("pairwise_items")
    op.drop_index("ix_pairwise_reviews_state_id", table_name="pairwise_reviews")
    op.drop_table("pairwise_reviews")
    op.drop_index("ix_ab_analyses_source_sha256", table_name="ab_analyses")
    op.drop_table("ab_analyses")


APPEND_ONLY = ("ab_analyses", "pairwise_items")  # hat_refuse_change() comes from 0001
PG_FUNCTIONS = (
    """
CREATE FUNCTION hat_review_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR OLD.state = 'closed' THEN
        RAISE EXCEPTION 'pairwise review % is final: % refused', OLD.id, TG_OP
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END;
$$
""",
    """
CREATE FUNCTION hat_vote_on_closed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE rid integer;
BEGIN
    IF TG_OP = 'DELETE' THEN rid := OLD.review_id; ELSE rid := NEW.review_id; END IF;
    IF EXISTS (SELECT 1 FROM pairwise_reviews WHERE id = rid AND state = 'closed') THEN
        RAISE EXCEPTION 'pairwise review % is closed: % of a vote refused', rid, TG_OP
            USING ERRCODE = 'restrict_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
END;
$$
""",
)
SQLITE_TRIGGERS = (
    ("pairwise_reviews_final_update", "UPDATE ON pairwise_reviews WHEN OLD.state = 'closed'",
     "pairwise review is closed: UPDATE refused"),
    ("pairwise_reviews_no_delete", "DELETE ON pairwise_reviews",
     "pairwise reviews are final: DELETE refused"),
    *[(f"pairwise_votes_closed_{event.lower()}",
       f"{event} ON pairwise_votes WHEN (SELECT state FROM pairwise_reviews "
       f"WHERE id = {'OLD' if event == 'DELETE' else 'NEW'}.review_id) = 'closed'",
       f"pairwise review is closed: {event} of a vote refused")
      for event in ("INSERT", "UPDATE", "DELETE")],
)


def _create_triggers() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in APPEND_ONLY:
            op.execute(f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                       "FOR EACH ROW EXECUTE FUNCTION hat_refuse_change()")
            op.execute(f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                       "FOR EACH STATEMENT EXECUTE FUNCTION hat_refuse_change()")
        for function in PG_FUNCTIONS:
            op.execute(function)
        op.execute("CREATE TRIGGER pairwise_reviews_final BEFORE UPDATE OR DELETE ON "
                   "pairwise_reviews FOR EACH ROW EXECUTE FUNCTION hat_review_final()")
        op.execute("CREATE TRIGGER pairwise_votes_closed BEFORE INSERT OR UPDATE OR DELETE ON "
                   "pairwise_votes FOR EACH ROW EXECUTE FUNCTION hat_vote_on_closed()")
        return
    for table in APPEND_ONLY:
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER {table}_no_{event.lower()} BEFORE {event} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: {event} refused'); END"
            )
    for name, when, message in SQLITE_TRIGGERS:
        op.execute(f"CREATE TRIGGER {name} BEFORE {when} "
                   f"BEGIN SELECT RAISE(ABORT, '{message}'); END")


def _drop_triggers() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER pairwise_votes_closed ON pairwise_votes")
        op.execute("DROP TRIGGER pairwise_reviews_final ON pairwise_reviews")
        op.execute("DROP FUNCTION hat_vote_on_closed()")
        op.execute("DROP FUNCTION hat_review_final()")
        for table in APPEND_ONLY:
            op.execute(f"DROP TRIGGER {table}_append_only ON {table}")
            op.execute(f"DROP TRIGGER {table}_no_truncate ON {table}")
        return
    for name, _, _ in SQLITE_TRIGGERS:
        op.execute(f"DROP TRIGGER {name}")
    for table in APPEND_ONLY:
        for event in ("update", "delete"):
            op.execute(f"DROP TRIGGER {table}_no_{event}")
