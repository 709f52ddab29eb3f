"""The console's login behind the throttle (AppTest, seeded SQLite store): the lockout
triggers after repeated failures, refuses the right password meanwhile and is audited; a
name made before the identifier rule shows as plain text, never as a link."""

from __future__ import annotations

from console_helpers import APP, PASSWORD, logged_in, texts
from sqlalchemy import insert
from streamlit.testing.v1 import AppTest

from db.audit_repo import list_audit
from db.login_repo import POLICY
from db.models import UserRow, utcnow


def attempt(at: AppTest, name: str, password: str) -> AppTest:
    at.text_input(key="login_name").input(name)
    at.text_input(key="login_password").input(password)
    return at.button(key="login_submit").click().run()


def test_the_lockout_triggers_and_is_audited(console_db, console_sessions):
    at = AppTest.from_file(APP, default_timeout=30).run()
    for _ in range(POLICY.user_failures - 1):
        assert "wrong password" in texts(attempt(at, "operator", "not-the-password"))
    assert "Too many failed logins" in texts(attempt(at, "operator", "not-the-password"))
    assert "Too many failed logins" in texts(attempt(at, "operator", PASSWORD))
    assert "user" not in at.session_state and "session_token" not in at.session_state
    with console_sessions() as s:
        (entry,) = list_audit(s, entity="login")
    assert (entry.action, entry.entity_id) == ("login.lockout", "user:operator")
    assert attempt(at, "viewer", PASSWORD).session_state["user"].name == "viewer"


def test_a_markdown_name_shows_as_plain_text(console_db, console_sessions):
    with console_sessions.begin() as s:  # a user from before the identifier rule
        s.execute(insert(UserRow).values(name="[u](javascript:alert(32))", role="viewer",
                                         password_hash="x", created_at=utcnow()))
    at = logged_in(AppTest.from_file(APP, default_timeout=30), console_sessions,
                   "[u](javascript:alert(32))").run()
    (caption,) = [c.value for c in at.caption if "Signed in as" in c.value]
    assert caption == r"Signed in as **\[u\]\(javascript\:alert\(32\)\)** (viewer)"
