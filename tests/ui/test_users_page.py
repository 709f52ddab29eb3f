"""The Users page (AppTest, seeded SQLite store): an admin adds a user, changes a role and
a password, removes a user; each change is audited and logs that user's open tab out at its
next run; a weak password and the last admin are refused with the reason."""

from __future__ import annotations

from console_helpers import APP, logged_in, texts
from streamlit.testing.v1 import AppTest

from db.audit_repo import list_audit
from db.users_repo import get_user, verify_user


def open_tab(sessions, name: str, page: str) -> AppTest:
    at = logged_in(AppTest.from_file(APP, default_timeout=30), sessions, name).run()
    return at.switch_page(f"pages/{page}.py").run()


def pick(at: AppTest, name: str) -> AppTest:
    at.selectbox(key="change_user_name").set_value(name)
    return at


def test_role_change_password_change_and_removal(console, console_sessions):
    admin = console("admin", "users")
    reviewer_tab = open_tab(console_sessions, "reviewer", "bad_cases")
    pick(admin, "reviewer").selectbox(key="change_user_role").set_value("operator")
    admin.button(key="set_role_submit").click().run()
    assert "reviewer is now operator" in texts(admin)
    reviewer_tab.run()
    assert "user" not in reviewer_tab.session_state  # logged out at the next run

    operator_tab = open_tab(console_sessions, "operator", "harness_versions")
    pick(admin, "operator").text_input(key="change_user_password").input("password1234")
    admin.button(key="set_password_submit").click().run()
    assert "common password" in texts(admin)
    operator_tab.run()
    assert operator_tab.session_state["user"].name == "operator"  # refused: nothing changed
    pick(admin, "operator").text_input(key="change_user_password").input("brand new secret")
    admin.button(key="set_password_submit").click().run()
    operator_tab.run()
    assert "user" not in operator_tab.session_state

    viewer_tab = open_tab(console_sessions, "viewer", "harness_versions")
    pick(admin, "viewer").button(key="remove_user_submit").click().run()
    assert "Tick the box" in texts(admin)
    pick(admin, "viewer").checkbox(key="remove_user_sure").check()
    admin.button(key="remove_user_submit").click().run()
    assert "Removed viewer" in texts(admin)
    viewer_tab.run()
    assert "user" not in viewer_tab.session_state
    with console_sessions() as s:
        assert get_user(s, name="viewer") is None
        assert verify_user(s, name="operator", password="brand new secret") is not None
        actions = [e.action for e in list_audit(s, entity="user", limit=3)]
    assert actions == ["user.remove", "user.set_password", "user.set_role"]


def test_the_last_admin_cannot_demote_itself(console, console_sessions):
    admin = console("admin", "users")
    pick(admin, "admin").selectbox(key="change_user_role").set_value("viewer")
    admin.button(key="set_role_submit").click().run()
    assert "last admin" in texts(admin)
    with console_sessions() as s:
        assert get_user(s, name="admin").role == "admin"
