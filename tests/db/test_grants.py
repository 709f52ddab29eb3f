"""The application's PostgreSQL role (`db.grants`), on a migrated database: it can do what
the application does (add and change users, log in, submit a harness, register, promote,
audit), and cannot UPDATE or DELETE the release records, nor disable their triggers, nor
set `session_replication_role`. Marked `postgres`; every table is classified."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from typer.testing import CliRunner

from db.audit_chain import verify_chain
from db.engine import in_transaction, make_engine, make_session_factory
from db.errors import StoreError
from db.grants import APPEND_ONLY, MUTABLE, grant_app_role, grant_statements
from db.harness_repo import submit_harness
from db.login_repo import attempt_login
from db.models import Base
from db.release_repo import promote, register_model_version
from db.users_repo import add_user, remove_user, set_role
from hat_cli.main import app
from hat_core.harness.io import load_harness


def test_every_table_is_classified_once():
    assert set(APPEND_ONLY).isdisjoint(MUTABLE)
    assert set(Base.metadata.tables) == set(APPEND_ONLY) | set(MUTABLE)


def test_role_names_are_checked():
    with pytest.raises(StoreError, match="invalid role name"):
        grant_statements('x"; DROP TABLE users; --')


def test_sqlite_is_refused(tmp_path):
    with pytest.raises(StoreError, match="PostgreSQL only"):
        grant_app_role(f"sqlite:///{tmp_path / 'x.db'}", "hat_app")


def test_hat_db_upgrade_grant_refuses_sqlite(tmp_path, monkeypatch):
    monkeypatch.setenv("HAT_DATABASE_URL", f"sqlite:///{tmp_path / 'hat.db'}")
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["db", "upgrade", "--grant", "hat_app"])
    assert result.exit_code == 2 and "PostgreSQL only" in result.output


@pytest.fixture
def app_sessions(databases, tmp_path, monkeypatch):
    """A session factory connected as a fresh role given the application's grants by
    `hat db upgrade --grant ROLE` (run as the owner)."""
    owner_url = databases.migrated("postgres")
    role = f"hat_app_{uuid.uuid4().hex[:8]}"
    owner = make_engine(owner_url, isolation_level="AUTOCOMMIT")
    with owner.connect() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {role} LOGIN")
    monkeypatch.setenv("HAT_DATABASE_URL", owner_url)
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "home"))
    granted = CliRunner().invoke(app, ["db", "upgrade", "--grant", role])
    assert granted.exit_code == 0 and f"role {role}" in granted.output, granted.output
    app_engine = make_engine(make_url(owner_url).set(username=role).render_as_string(False))
    yield make_session_factory(app_engine)
    app_engine.dispose()
    with owner.connect() as conn:
        conn.exec_driver_sql(f"DROP OWNED BY {role}")
        conn.exec_driver_sql(f"DROP ROLE {role}")
    owner.dispose()


@pytest.mark.postgres
def test_the_app_role_does_what_the_application_does(app_sessions, v1_path):
    sessions = app_sessions

    def work(s):
        add_user(s, name="root1", role="admin", password="root one password", actor="setup")
        add_user(s, name="ann", role="operator", password="ann long password", actor="root1")
        version = submit_harness(s, harness=load_harness(v1_path), author="ann")
        model = register_model_version(s, registry_name="m", version="1",
                                       gate_results={"passed": True})
        promote(s, slot="ab", model_version_id=model.id, actor="ann", reason="gates passed",
                gate_snapshot={})
        return version

    assert in_transaction(sessions, work).number == 1
    failed = in_transaction(sessions, lambda s: attempt_login(
        s, name="ann", password="wrong password!", client_address="10.1.1.1"))
    assert failed.token is None
    logged = in_transaction(sessions, lambda s: attempt_login(
        s, name="ann", password="ann long password", client_address="10.1.1.1"))
    assert logged.token
    in_transaction(sessions, lambda s: set_role(s, name="ann", role="viewer", actor="root1"))
    in_transaction(sessions, lambda s: remove_user(s, name="ann", actor="root1"))
    with sessions() as s:
        assert verify_chain(s).ok


@pytest.mark.postgres
@pytest.mark.parametrize("sql", [
    "UPDATE audit_log SET actor = 'mallory'",
    "DELETE FROM audit_log",
    "TRUNCATE audit_log",
    "UPDATE promotions SET override = true",
    "DELETE FROM promotions",
    "UPDATE harness_versions SET note = 'x'",
    "DELETE FROM harness_versions",
    "UPDATE model_versions SET gate_results = '{\"passed\": true}'",
    "ALTER TABLE audit_log DISABLE TRIGGER ALL",
    "ALTER TABLE promotions DISABLE TRIGGER promotions_append_only",
    "SET session_replication_role = replica",
    "DROP TRIGGER audit_log_append_only ON audit_log",
])
def test_the_app_role_cannot_touch_the_release_records(app_sessions, sql):
    with pytest.raises(DBAPIError, match="permission denied|must be owner"), \
            app_sessions.begin() as s:
        s.execute(text(sql))
