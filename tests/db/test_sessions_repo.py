"""Login sessions in the store: the token is never stored, the expiry is absolute (a lookup
never extends it), revoking one or all of a user's sessions, the role read fresh."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from db.engine import in_transaction
from db.errors import StoreError
from db.models import UserRow, UserSessionRow
from db.sessions_repo import open_session, revoke_session, revoke_user_sessions, session_user
from db.users_repo import add_user

T0 = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def user_id(sessions, name: str, role: str = "operator") -> int:
    return in_transaction(sessions, lambda s: add_user(
        s, name=name, role=role, password="correct horse battery", actor="test")).id


def opened(sessions, uid: int, **kwargs) -> str:
    return in_transaction(sessions, lambda s: open_session(s, user_id=uid, client="console",
                                                           **kwargs))


def who(sessions, token: str, now: datetime | None = None):
    with sessions() as s:
        return session_user(s, token=token, now=now)


def test_the_store_keeps_only_the_hash(sessions):
    token = opened(sessions, user_id(sessions, "ann"))
    with sessions() as s:
        (stored,) = s.scalars(select(UserSessionRow.token_hash)).all()
    assert stored == hashlib.sha256(token.encode()).hexdigest() and token not in stored
    assert len(token) >= 40  # 32 random bytes, url-safe
    assert who(sessions, stored) is None  # the hash itself logs nobody in


def test_absolute_expiry_is_never_extended(sessions):
    token = opened(sessions, user_id(sessions, "ann"), ttl_s=60, now=T0)
    for second in (1, 30, 59):  # lookups near the end do not renew it
        assert who(sessions, token, T0 + timedelta(seconds=second)).name == "ann"
    assert who(sessions, token, T0 + timedelta(seconds=60)) is None
    with sessions() as s:
        expires = s.scalar(select(UserSessionRow.expires_at))
    assert expires.replace(tzinfo=UTC) == T0 + timedelta(seconds=60)


def test_revoke_one_or_all_of_a_user(sessions):
    ann, bob = user_id(sessions, "ann"), user_id(sessions, "bob")
    first, second, bobs = opened(sessions, ann), opened(sessions, ann), opened(sessions, bob)
    assert in_transaction(sessions, lambda s: revoke_session(s, token=first)) is True
    assert in_transaction(sessions, lambda s: revoke_session(s, token=first)) is False
    assert who(sessions, first) is None and who(sessions, second).name == "ann"
    assert in_transaction(sessions, lambda s: revoke_user_sessions(s, user_id=ann)) == 1
    assert who(sessions, second) is None
    assert who(sessions, bobs).name == "bob"  # another user's session is untouched


def test_the_role_is_read_at_each_lookup(sessions):
    token = opened(sessions, user_id(sessions, "ann", role="admin"))
    assert who(sessions, token).role == "admin"
    with sessions.begin() as s:  # changed behind the console's back
        s.execute(update(UserRow).where(UserRow.name == "ann").values(role="viewer"))
    assert who(sessions, token).role == "viewer"


def test_unknown_tokens_and_clients(sessions):
    assert who(sessions, "") is None and who(sessions, "no-such-token") is None
    uid = user_id(sessions, "ann")
    with pytest.raises(StoreError, match="valid: console, cli"):
        in_transaction(sessions, lambda s: open_session(s, user_id=uid, client="web"))
