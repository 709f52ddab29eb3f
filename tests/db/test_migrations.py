"""Migrations: empty -> head -> base -> head on both databases; models and migrations agree."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from db import migrate
from db.engine import make_engine
from db.errors import NotMigratedError
from db.models import Base

TABLES = {
    "harness_lines", "harness_versions", "outbox_events", "retrain_jobs", "stage_runs",
    "model_versions", "eval_results", "bad_cases", "promotions", "users", "audit_log",
    "ab_analyses", "pairwise_reviews", "pairwise_items", "pairwise_votes", "user_sessions",
    "login_throttles", "ab_experiments", "exposures", "outcomes",
}
EVIDENCE = {"ab_analyses", "pairwise_reviews", "pairwise_items", "pairwise_votes"}
ACCESS = {"user_sessions", "login_throttles"}  # 0003, 0004
GATEWAY = {"ab_experiments", "exposures", "outcomes"}  # 0007


def table_names(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def test_empty_to_head_to_base_and_back(empty_db_url):
    assert migrate.current(empty_db_url) is None
    migrate.upgrade(empty_db_url)
    assert migrate.current(empty_db_url) == migrate.head()
    assert table_names(empty_db_url) == TABLES
    migrate.downgrade(empty_db_url, "base")
    assert migrate.current(empty_db_url) is None
    assert table_names(empty_db_url) == set()
    migrate.upgrade(empty_db_url)
    assert table_names(empty_db_url) == TABLES


def test_0002_downgrades_to_0001_and_upgrades_again(empty_db_url):
    migrate.upgrade(empty_db_url)
    migrate.downgrade(empty_db_url, "0001")
    assert migrate.current(empty_db_url) == "0001"
    assert table_names(empty_db_url) == TABLES - EVIDENCE - ACCESS - GATEWAY
    migrate.upgrade(empty_db_url)
    assert migrate.current(empty_db_url) == migrate.head()
    assert table_names(empty_db_url) == TABLES


def test_0003_downgrades_to_0002_and_upgrades_again(empty_db_url):
    migrate.upgrade(empty_db_url)
    migrate.downgrade(empty_db_url, "0002")
    assert table_names(empty_db_url) == TABLES - ACCESS - GATEWAY
    migrate.upgrade(empty_db_url, "0003")
    assert table_names(empty_db_url) == TABLES - {"login_throttles"} - GATEWAY
    migrate.upgrade(empty_db_url)
    assert table_names(empty_db_url) == TABLES


def test_0007_downgrades_to_0006_and_upgrades_again(empty_db_url):
    migrate.upgrade(empty_db_url)
    migrate.downgrade(empty_db_url, "0006")
    assert table_names(empty_db_url) == TABLES - GATEWAY
    migrate.upgrade(empty_db_url)
    assert table_names(empty_db_url) == TABLES


def column_names(url: str, table: str) -> set[str]:
    engine = make_engine(url)
    try:
        return {c["name"] for c in inspect(engine).get_columns(table)}
    finally:
        engine.dispose()


def test_0009_downgrades_to_0008_and_upgrades_again(empty_db_url):
    consumed = {"consumed_by_build", "consumed_by_job_id", "consumed_at"}
    migrate.upgrade(empty_db_url)
    assert consumed <= column_names(empty_db_url, "bad_cases")
    migrate.downgrade(empty_db_url, "0008")
    assert migrate.current(empty_db_url) == "0008"
    assert not consumed & column_names(empty_db_url, "bad_cases")
    assert table_names(empty_db_url) == TABLES
    migrate.upgrade(empty_db_url)
    assert consumed <= column_names(empty_db_url, "bad_cases")


def test_models_and_migrations_agree(db_url):
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []
    finally:
        engine.dispose()


def test_require_head_refuses_an_unmigrated_database(empty_db_url):
    with pytest.raises(NotMigratedError, match="run `hat db upgrade`"):
        migrate.require_head(empty_db_url)


def test_upgrade_creates_the_sqlite_folder(tmp_path):
    url = f"sqlite:///{tmp_path / 'a' / 'b' / 'hat.db'}"
    migrate.upgrade(url)
    assert migrate.current(url) == migrate.head()


def test_current_does_not_create_a_missing_sqlite_file(tmp_path):
    assert migrate.current(f"sqlite:///{tmp_path / 'none.db'}") is None
    assert not (tmp_path / "none.db").exists()


def test_0006_keeps_jobs_and_their_stage_runs_both_ways(empty_db_url):
    """0006 rebuilds `retrain_jobs` on SQLite while stage runs point at it: no row is lost,
    and a downgrade turns `interrupted` jobs into `failed` ones."""
    from sqlalchemy import text
    from store_helpers import variant

    from db.engine import in_transaction, make_session_factory
    from db.harness_repo import submit_harness
    from db.jobs_repo import add_stage_run, create_job, transition_job

    migrate.upgrade(empty_db_url)
    engine = make_engine(empty_db_url)
    sessions = make_session_factory(engine)

    def fill(s):
        version = submit_harness(s, harness=variant(1), author="ann")
        job = create_job(s, harness_version_id=version.id, trigger="harness-change")
        transition_job(s, job_id=job.id, to="running")
        transition_job(s, job_id=job.id, to="interrupted", reason="SIGTERM")
        add_stage_run(s, job_id=job.id, stage="sft", mlflow_run_id="r1")
        return job.id
    job_id = in_transaction(sessions, fill)
    engine.dispose()
    migrate.downgrade(empty_db_url, "0005")
    migrate.upgrade(empty_db_url)
    engine = make_engine(empty_db_url)
    try:
        with engine.connect() as conn:
            state = conn.execute(text("SELECT state, stage, history FROM retrain_jobs")).one()
            runs = conn.execute(text("SELECT job_id FROM stage_runs")).scalars().all()
    finally:
        engine.dispose()
    assert state[0] == "failed" and state[1] == "" and runs == [job_id]


def test_0008_drops_and_adds_the_sso_identity_keeping_users(empty_db_url):
    from sqlalchemy import inspect, text

    migrate.upgrade(empty_db_url)
    engine = make_engine(empty_db_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO users (name, role, password_hash, created_at, "
                              "sso_identity) VALUES ('ann', 'admin', 'h', CURRENT_TIMESTAMP, "
                              "'ann@example.com')"))
        migrate.downgrade(empty_db_url, "0007")
        engine.dispose()
        assert "sso_identity" not in {c["name"] for c in inspect(engine).get_columns("users")}
        migrate.upgrade(empty_db_url)
        engine.dispose()
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT name, sso_identity FROM users")).all()
        assert [tuple(r) for r in rows] == [("ann", None)]
    finally:
        engine.dispose()
