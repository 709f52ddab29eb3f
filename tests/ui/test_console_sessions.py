"""Console sessions held on the server and read fresh on every run (AppTest, seeded SQLite
store): no token in the URL, an old-style `?session=` token (even one signed with an empty
key) logs nobody in, a demotion counts at the next click, an expired session logs out.

AppTest runs a page directly after `switch_page` (Streamlit's `pages/` folder mode), so these
runs check each page's own guard (`ui.session.require_user`), which reads the store too."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

from console_helpers import APP, EXAMPLES, texts
from sqlalchemy import update
from streamlit.testing.v1 import AppTest

from db.harness_repo import count_versions
from db.models import UserRow, UserSessionRow
from db.users_repo import list_users


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def empty_key_token(name: str) -> str:
    """A token in the old `name.expiry.signature` format, signed with an empty key."""
    body = f"{_b64(name.encode())}.{int(time.time()) + 3600}"
    return f"{body}.{_b64(hmac.new(b'', body.encode(), hashlib.sha256).digest())}"


def test_a_forged_token_logs_nobody_in(console_db):
    for where in ("url", "state"):
        at = AppTest.from_file(APP, default_timeout=30)
        if where == "url":
            at.query_params["session"] = empty_key_token("admin")
        else:
            at.session_state["session_token"] = empty_key_token("admin")
        at.run()
        assert not at.exception
        assert "user" not in at.session_state, where
        assert at.button(key="login_submit")
        assert "session" not in at.query_params  # an old URL token is dropped


def set_role(sessions, name: str, role: str) -> None:
    with sessions.begin() as s:
        s.execute(update(UserRow).where(UserRow.name == name).values(role=role))


def test_a_demoted_admin_cannot_add_a_user_from_an_open_tab(console, console_sessions):
    at = console("admin", "users")
    assert at.text_input(key="new_user_name")
    set_role(console_sessions, "admin", "viewer")
    at.text_input(key="new_user_name").input("mallory")
    at.selectbox(key="new_user_role").select("admin")
    at.text_input(key="new_user_password").input("mallory-password-1")
    at.button(key="add_user_submit").click().run()
    assert at.session_state["user"].role == "viewer"
    assert "the viewer role may not users.manage" in texts(at)
    with console_sessions() as s:
        assert "mallory" not in {u.name for u in list_users(s)}


def test_a_demoted_operator_cannot_store_a_harness(console, console_sessions):
    at = console("operator", "harness_submit")
    with console_sessions() as s:
        before = count_versions(s)
    set_role(console_sessions, "operator", "viewer")
    at.text_area(key="harness_text").set_value((EXAMPLES / "v1.yaml").read_text().replace(
        "description: ", "description: (demoted) ", 1))
    at.button(key="submit_harness").click().run()
    with console_sessions() as s:
        assert count_versions(s) == before
    assert "Stored version" not in texts(at)


def test_an_expired_session_logs_out_at_the_next_run(console, console_sessions):
    at = console("reviewer", "bad_cases")
    assert at.session_state["user"].name == "reviewer"
    with console_sessions.begin() as s:  # the absolute expiry passes
        s.execute(update(UserSessionRow).values(expires_at=UserSessionRow.created_at))
    at.run()
    assert "user" not in at.session_state
    assert "Your session ended" in texts(at) and "the anonymous role may not" in texts(at)
