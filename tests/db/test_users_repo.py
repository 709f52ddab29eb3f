"""Users: roles, argon2id hashes, verification; role and password changes and removal
(audited, ending the user's sessions; the last admin stays)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from db.audit_repo import list_audit
from db.engine import in_transaction
from db.errors import StoreError
from db.models import UserRow
from db.sessions_repo import open_session, session_user
from db.users_repo import (
    add_user,
    get_user,
    list_users,
    remove_user,
    set_password,
    set_role,
    verify_user,
)


def add(sessions, name="ann", role="reviewer", password="correct horse"):
    return in_transaction(sessions, lambda s: add_user(
        s, name=name, role=role, password=password, actor="admin"))


def test_add_verify_and_list(sessions):
    ann = add(sessions)
    add(sessions, name="bob", role="admin")
    with sessions() as s:
        assert verify_user(s, name="ann", password="correct horse") == ann
        assert verify_user(s, name="ann", password="wrong horse") is None
        assert verify_user(s, name="nobody", password="correct horse") is None
        assert [(u.name, u.role) for u in list_users(s)] == [("ann", "reviewer"), ("bob", "admin")]
        assert get_user(s, name="bob").role == "admin"
        stored_hash = s.scalar(select(UserRow.password_hash).where(UserRow.name == "ann"))
        assert list_audit(s, entity="user")[0].after == {"name": "bob", "role": "admin"}
    assert stored_hash.startswith("$argon2id$") and "correct horse" not in stored_hash


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"role": "boss"}, "valid: viewer, reviewer, operator, admin"),
     ({"password": "short"}, "at least 12"), ({"password": "password1234"}, "common password"),
     ({"name": " "}, "must start with a letter"),
     ({"name": "[u](javascript:alert(32))"}, "must start with a letter")],
)
def test_refusals(sessions, kwargs, message):
    with pytest.raises(StoreError, match=message):
        add(sessions, **kwargs)


def test_a_name_is_taken_once(sessions):
    add(sessions)
    with pytest.raises(StoreError, match="exists already"):
        add(sessions)
    with sessions() as s:
        assert len(list_users(s)) == 1


def opened(sessions, name: str) -> str:
    def open_for(s):
        return open_session(s, user_id=get_user(s, name=name).id, client="console")

    return in_transaction(sessions, open_for)


def alive(sessions, token: str) -> bool:
    with sessions() as s:
        return session_user(s, token=token) is not None


def test_set_role_is_audited_and_ends_the_users_sessions(sessions):
    add(sessions, name="ann", role="operator")
    add(sessions, name="bob", role="admin")
    token, bobs = opened(sessions, "ann"), opened(sessions, "bob")
    user = in_transaction(sessions, lambda s: set_role(s, name="ann", role="viewer",
                                                        actor="bob"))
    assert user.role == "viewer" and not alive(sessions, token) and alive(sessions, bobs)
    with sessions() as s:
        entry = list_audit(s, entity="user")[0]
    assert (entry.action, entry.actor) == ("user.set_role", "bob")
    assert (entry.before["role"], entry.after["role"]) == ("operator", "viewer")


def test_set_password_follows_the_policy_and_ends_the_sessions(sessions):
    add(sessions)
    token = opened(sessions, "ann")
    with pytest.raises(StoreError, match="common password"):
        in_transaction(sessions, lambda s: set_password(s, name="ann", password="password1234",
                                                        actor="ann"))
    assert alive(sessions, token)  # a refused change changes nothing
    in_transaction(sessions, lambda s: set_password(s, name="ann", password="a new long secret",
                                                    actor="ann"))
    assert not alive(sessions, token)
    with sessions() as s:
        assert verify_user(s, name="ann", password="correct horse") is None
        assert verify_user(s, name="ann", password="a new long secret").name == "ann"
        entry = list_audit(s, entity="user")[0]
    assert entry.action == "user.set_password" and "hash" not in str(entry.after)


def test_a_removed_and_re_added_name_is_a_new_user(sessions):
    add(sessions, name="ann", role="admin")
    add(sessions, name="boss", role="admin")
    token = opened(sessions, "ann")
    removed = in_transaction(sessions, lambda s: remove_user(s, name="ann", actor="boss"))
    again = add(sessions, name="ann", role="viewer")
    assert again.id != removed.id and not alive(sessions, token)
    with sessions() as s:
        entry = list_audit(s, entity="user", entity_id=removed.id)[0]
    assert (entry.action, entry.before) == ("user.remove", {"name": "ann", "role": "admin"})


def test_the_last_admin_stays(sessions):
    add(sessions, name="root1", role="admin")
    with pytest.raises(StoreError, match="last admin"):
        in_transaction(sessions, lambda s: set_role(s, name="root1", role="operator", actor="x"))
    with pytest.raises(StoreError, match="last admin"):
        in_transaction(sessions, lambda s: remove_user(s, name="root1", actor="x"))
    with pytest.raises(StoreError, match="no user named 'nobody'"):
        in_transaction(sessions, lambda s: remove_user(s, name="nobody", actor="x"))
    with sessions() as s:
        assert [(u.name, u.role) for u in list_users(s)] == [("root1", "admin")]
