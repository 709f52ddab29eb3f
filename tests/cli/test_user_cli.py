"""`hat user add|set-role|set-password|remove|list` through the installed console script, on
SQLite and PostgreSQL: the acting admin proves itself (its password on stdin's first line),
the policy and the name rule refuse with exit 2, each change is audited, the last admin
stays."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from db.audit_repo import list_audit
from db.engine import make_engine, make_session_factory

HAT = str(Path(sys.executable).parent / "hat")


@pytest.fixture
def hat(tmp_path, db_url):
    env = {**os.environ, "HAT_HOME": str(tmp_path / "home"), "HAT_DATABASE_URL": db_url}

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([HAT, "user", *args], input=stdin, capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=120)

    return run


def actions(url: str) -> list[str]:
    engine = make_engine(url)
    with make_session_factory(engine)() as s:
        out = [e.action for e in reversed(list_audit(s, entity="user"))]
    engine.dispose()
    return out


ROOT_PW = "root one password"
AS_ROOT = ("--actor", "root1", "--password-stdin")


def test_the_user_lifecycle(hat, db_url):
    assert hat("add", "root1", "--role", "admin", "--password-stdin",
               stdin=ROOT_PW + "\n").returncode == 0  # the first user: no login
    added = hat("add", "rita", "--role", "reviewer", *AS_ROOT,
                stdin=f"{ROOT_PW}\na long secret\n")
    assert added.returncode == 0, added.stderr
    promoted = hat("set-role", "rita", "--role", "operator", *AS_ROOT, stdin=ROOT_PW + "\n")
    assert promoted.returncode == 0 and "rita is now operator" in promoted.stdout
    changed = hat("set-password", "rita", *AS_ROOT, stdin=f"{ROOT_PW}\nanother long secret\n")
    assert changed.returncode == 0, changed.stderr
    weak = hat("set-password", "rita", *AS_ROOT, stdin=f"{ROOT_PW}\npassword1234\n")
    assert weak.returncode == 2 and "common password" in weak.stderr
    not_admin = hat("remove", "root1", "--actor", "rita", "--password-stdin",
                    stdin="another long secret\n")
    assert not_admin.returncode == 2 and "needs the admin role" in not_admin.stderr
    last = hat("remove", "root1", *AS_ROOT, stdin=ROOT_PW + "\n")
    assert last.returncode == 2 and "last admin" in last.stderr
    removed = hat("remove", "rita", *AS_ROOT, stdin=ROOT_PW + "\n")
    assert removed.returncode == 0 and "removed user rita (operator)" in removed.stdout
    missing = hat("set-role", "rita", "--role", "viewer", *AS_ROOT, stdin=ROOT_PW + "\n")
    assert missing.returncode == 2 and "no user named 'rita'" in missing.stderr
    assert hat("list").stdout.splitlines()[0].startswith("root1\tadmin\t")
    assert actions(db_url) == ["user.add", "user.add", "user.set_role", "user.set_password",
                               "user.remove"]


def test_bad_names_and_passwords_exit_2_and_store_nothing(hat):
    spoof = hat("add", "[u](javascript:alert(32))", "--role", "viewer", "--password-stdin",
                stdin="a long secret\n")
    assert spoof.returncode == 2 and "must start with a letter" in spoof.stderr
    for weak in ("12345678", "password", "        "):  # the first user, still refused
        result = hat("add", "sam", "--role", "admin", "--password-stdin", stdin=weak + "\n")
        assert result.returncode == 2 and "password refused" in result.stderr, weak
    assert "Traceback" not in spoof.stderr
    assert hat("list").stdout == ""


def test_set_sso_links_an_identity_for_admins_only(hat, db_url):
    assert hat("add", "root1", "--role", "admin", "--password-stdin",
               stdin=ROOT_PW + "\n").returncode == 0
    assert hat("add", "rita", "--role", "viewer", *AS_ROOT,
               stdin=f"{ROOT_PW}\na long secret\n").returncode == 0
    linked = hat("set-sso", "rita", "Rita@Example.com", *AS_ROOT, stdin=ROOT_PW + "\n")
    assert linked.returncode == 0 and "SSO identity rita@example.com" in linked.stdout
    assert "rita\tviewer\t" in hat("list").stdout and "\trita@example.com" in hat("list").stdout
    taken = hat("set-sso", "root1", "rita@example.com", *AS_ROOT, stdin=ROOT_PW + "\n")
    assert taken.returncode == 2 and "linked to another user" in taken.stderr
    not_admin = hat("set-sso", "rita", "x@example.com", "--actor", "rita", "--password-stdin",
                    stdin="a long secret\n")
    assert not_admin.returncode == 2 and "needs the admin role" in not_admin.stderr
    neither = hat("set-sso", "rita", *AS_ROOT, stdin=ROOT_PW + "\n")
    assert neither.returncode == 2 and "give an IDENTITY or --clear" in neither.stderr
    cleared = hat("set-sso", "rita", "--clear", *AS_ROOT, stdin=ROOT_PW + "\n")
    assert cleared.returncode == 0 and "SSO identity none" in cleared.stdout
    assert actions(db_url)[-2:] == ["user.set_sso", "user.set_sso"]
