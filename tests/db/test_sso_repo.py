"""SSO identities and sign-ins in the store, on SQLite and PostgreSQL: an identity links to
one user (audited, unique, e-mail case ignored); a sign-in of an unlinked identity is refused
and audited; a sign-in opens one session, shared by every tab, that a logout or a role change
ends for good; a sign-in older than the session lifetime opens none."""

from __future__ import annotations

from datetime import timedelta

import pytest

from db.audit_repo import list_audit
from db.engine import in_transaction
from db.errors import StoreError
from db.models import utcnow
from db.sessions_repo import SESSION_TTL_S, revoke_session, session_user
from db.sso_repo import ENDED, SsoSignIn, link_sso, sso_login, sso_user
from db.users_repo import add_user, set_role


@pytest.fixture
def users(sessions):
    in_transaction(sessions, lambda s: (
        add_user(s, name="ann", role="operator", password="ann long password", actor="t"),
        add_user(s, name="bob", role="viewer", password="bob long password", actor="t")))
    return sessions


def sign_in(identity: str, key: str = "k1", age_s: int = 5) -> SsoSignIn:
    return SsoSignIn(identity=identity, key=key, issued_at=utcnow() - timedelta(seconds=age_s))


def login(sessions, sign):
    return in_transaction(sessions, lambda s: sso_login(s, sign_in=sign))


def test_link_is_unique_and_audited(users):
    linked = in_transaction(users, lambda s: link_sso(s, name="ann", identity=" Ann@Example.COM ",
                                                      actor="root"))
    assert linked.sso_identity == "ann@example.com"
    with pytest.raises(StoreError, match="linked to another user"):
        in_transaction(users, lambda s: link_sso(s, name="bob", identity="ANN@example.com",
                                                 actor="root"))
    with pytest.raises(StoreError, match="invalid SSO identity"):
        in_transaction(users, lambda s: link_sso(s, name="bob", identity="two words",
                                                 actor="root"))
    with users() as s:
        assert sso_user(s, identity="ann@EXAMPLE.com").name == "ann"
        assert sso_user(s, identity="bob@example.com") is None
        (entry,) = [e for e in list_audit(s, entity="user") if e.action == "user.set_sso"]
    assert (entry.actor, entry.after) == ("root", {"name": "ann",
                                                   "sso_identity": "ann@example.com"})
    in_transaction(users, lambda s: link_sso(s, name="ann", identity=None, actor="root"))
    with users() as s:
        assert sso_user(s, identity="ann@example.com") is None


def test_unknown_identity_is_refused_and_audited(users):
    result = login(users, sign_in("eve@example.com"))
    assert result.token is None and result.user is None
    assert "eve@example.com is not a HAT Ops user: no access" in result.refusal
    with users() as s:
        (entry,) = [e for e in list_audit(s, entity="login") if e.action == "login.sso_refused"]
    assert entry.after == {"identity": "eve@example.com"}


def test_one_session_per_sign_in_until_logout_or_role_change(users):
    in_transaction(users, lambda s: link_sso(s, name="ann", identity="ann@example.com",
                                             actor="root"))
    first = login(users, sign_in("ann@example.com"))
    assert first.user.name == "ann" and first.user.role == "operator"
    tab = login(users, sign_in("ann@example.com"))  # another tab of the same sign-in
    assert tab.token == first.token
    in_transaction(users, lambda s: revoke_session(s, token=first.token))  # logout
    kept = login(users, sign_in("ann@example.com"))
    assert (kept.token, kept.refusal) == (None, ENDED)

    fresh = login(users, sign_in("ann@example.com", key="k2"))
    assert fresh.token and fresh.token != first.token
    in_transaction(users, lambda s: set_role(s, name="ann", role="viewer", actor="root"))
    with users() as s:
        assert session_user(s, token=fresh.token) is None
    assert login(users, sign_in("ann@example.com", key="k2")).refusal == ENDED
    third = login(users, sign_in("ann@example.com", key="k3"))
    assert third.user.role == "viewer"


def test_an_old_sign_in_opens_no_session(users):
    in_transaction(users, lambda s: link_sso(s, name="ann", identity="ann@example.com",
                                             actor="root"))
    old = login(users, sign_in("ann@example.com", age_s=SESSION_TTL_S + 1))
    assert (old.token, old.refusal) == (None, ENDED)
    recent = login(users, sign_in("ann@example.com", key="k9", age_s=SESSION_TTL_S - 600))
    with users() as s:
        assert session_user(s, token=recent.token).name == "ann"
        assert session_user(s, token=recent.token, now=utcnow() + timedelta(seconds=700)) is None
