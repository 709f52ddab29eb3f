"""Users: roles, argon2id hashes, verification."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from db.audit_repo import list_audit
from db.engine import in_transaction
from db.errors import StoreError
from db.models import UserRow
from db.users_repo import add_user, get_user, list_users, verify_user


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
