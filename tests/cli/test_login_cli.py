"""`hat login` / `hat logout` and the actor of user commands, on SQLite and PostgreSQL:
the saved login is owner-only and holds no password, it proves the actor until logout or
a password change, a non-admin cannot manage users, repeated wrong passwords lock out."""

from __future__ import annotations

import json
import stat

import pytest
from typer.testing import CliRunner

from db.audit_repo import list_audit
from db.engine import in_transaction, make_engine, make_session_factory
from db.login_repo import POLICY
from db.users_repo import add_user, list_users
from hat_cli.main import app

ADMIN_PW, OPS_PW = "root one password", "ops one password"


@pytest.fixture
def store(db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("HAT_DATABASE_URL", db_url)
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "home"))
    engine = make_engine(db_url)
    sessions = make_session_factory(engine)
    in_transaction(sessions, lambda s: (
        add_user(s, name="root1", role="admin", password=ADMIN_PW, actor="test"),
        add_user(s, name="ops", role="operator", password=OPS_PW, actor="test")))
    yield sessions
    engine.dispose()


def hat(*args: str, stdin: str = ""):
    return CliRunner().invoke(app, list(args), input=stdin)


def names(store) -> set[str]:
    with store() as s:
        return {u.name for u in list_users(s)}


def test_login_proves_the_actor_until_logout(store, tmp_path):
    saved = tmp_path / "home" / "cli-session"
    assert hat("login", "ops", "--password-stdin", stdin=OPS_PW + "\n").exit_code == 0
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert OPS_PW not in saved.read_text() and json.loads(saved.read_text())["name"] == "ops"
    refused = hat("user", "add", "bob", "--role", "viewer", "--password-stdin",
                  stdin="bob long password\n")
    assert refused.exit_code == 2 and "needs the admin role" in refused.output
    assert hat("logout").exit_code == 0 and not saved.exists()

    assert hat("login", "root1", "--password-stdin", stdin=ADMIN_PW + "\n").exit_code == 0
    added = hat("user", "add", "bob", "--role", "viewer", "--password-stdin",
                stdin="bob long password\n")
    assert added.exit_code == 0, added.output
    with store() as s:
        assert list_audit(s, entity="user")[0].actor == "root1"
    token = json.loads(saved.read_text())["token"]
    assert hat("user", "set-password", "root1", "--password-stdin",
               stdin="root new password\n").exit_code == 0
    ended = hat("user", "remove", "bob")
    assert ended.exit_code == 2 and "saved login of root1 has ended" in ended.output
    assert "bob" in names(store)
    saved.write_text(json.dumps({"name": "root1", "token": token}))  # a copied old token
    assert hat("user", "remove", "bob").exit_code == 2 and "bob" in names(store)


def test_actor_alone_is_not_trusted(store):
    claim = hat("user", "add", "eve", "--role", "admin", "--actor", "root1", "--password-stdin",
                stdin="a wrong guess here\neve long password\n")
    assert claim.exit_code == 2 and "not acting as root1" in claim.output
    no_tty = hat("user", "add", "eve", "--role", "admin", "--actor", "root1")
    assert no_tty.exit_code == 2 and "no terminal to ask on" in no_tty.output
    proven = hat("user", "add", "eve", "--role", "viewer", "--actor", "root1",
                 "--password-stdin", stdin=f"{ADMIN_PW}\neve long password\n")
    assert proven.exit_code == 0, proven.output
    assert names(store) == {"root1", "ops", "eve"}


def test_the_first_user_must_be_an_admin(db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("HAT_DATABASE_URL", db_url)
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "home"))
    viewer = hat("user", "add", "ann", "--role", "viewer", "--password-stdin",
                 stdin="ann long password\n")
    assert viewer.exit_code == 2 and "the first one must be an admin" in viewer.output
    first = hat("user", "add", "ann", "--role", "admin", "--password-stdin",
                stdin="ann long password\n")
    assert first.exit_code == 0, first.output
    second = hat("user", "add", "bob", "--role", "admin", "--password-stdin",
                 stdin="bob long password\n")
    assert second.exit_code == 2  # no longer an empty store: the actor must prove itself


def test_cli_logins_lock_out_too(store):
    for _ in range(POLICY.user_failures):
        hat("login", "root1", "--password-stdin", stdin="wrong guess again\n")
    locked = hat("login", "root1", "--password-stdin", stdin=ADMIN_PW + "\n")
    assert locked.exit_code == 2 and "Too many failed logins" in locked.output
    with store() as s:
        (entry,) = list_audit(s, entity="login")
    assert entry.entity_id == "user:root1" and entry.after["client"].startswith("cli:")


def test_a_check_only_login_opens_no_session(store):
    from sqlalchemy import func, select

    from db.login_repo import attempt_login
    from db.models import UserSessionRow

    result = in_transaction(store, lambda s: attempt_login(
        s, name="ops", password=OPS_PW, client_address="cli:test", client="cli", ttl_s=None))
    assert result.user.name == "ops" and result.token is None
    with store() as s:
        assert s.scalar(select(func.count()).select_from(UserSessionRow)) == 0
