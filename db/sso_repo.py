"""Single sign-on into the store's users: an identity linked to a user, and the session a
sign-in at the identity provider opens.

    link_sso(s, name="ann", identity="ann@example.com", actor="root")   # audited
    result = sso_login(s, sign_in=SsoSignIn(identity=..., key=..., issued_at=...))
    result.token      # the console session's token (`db.sessions_repo`), or None
    result.refusal    # why not: no user linked to the identity, a sign-in that has ended

A user logs in by SSO only through the identity an admin linked to them (`users.sso_identity`,
unique): an identity linked to nobody gets no access and its refusal is audited
(`login.sso_refused`). One sign-in at the provider (`SsoSignIn.key`, derived by the caller
from the ID token's issuer, subject, issue time and nonce) opens at most one session, whose
token is derived from that key, so every browser tab of the sign-in shares it: logging out
revokes it, and the same sign-in (a kept or copied identity cookie) never opens another.
The session ends `SESSION_TTL_S` after the sign-in at the provider, never later. Like a
password session, the user and role are read from `users` on every lookup, and a role or
password change or a removal ends it (`db.users_repo`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.errors import StoreError
from db.models import UserRow, UserSessionRow, utcnow
from db.rows import to_value
from db.sessions_repo import (
    SESSION_TTL_S,
    open_session,
    revoke_user_sessions,
    session_user,
    token_hash,
)
from db.values import User

MAX_IDENTITY = 320


@dataclass(frozen=True)
class SsoSignIn:
    """One sign-in at the identity provider: the identity (the configured claim's value),
    a secret key unique to the sign-in, and when the provider issued it."""

    identity: str
    key: str
    issued_at: datetime


@dataclass(frozen=True)
class SsoResult:
    """An SSO login: the user and session token on success, else why it was refused."""

    user: User | None
    token: str | None
    refusal: str


def normal_identity(identity: str) -> str:
    """`identity` as stored and compared: trimmed, e-mail addresses in lower case; refuses
    a blank or over-long one."""
    value = identity.strip()
    if not value or len(value) > MAX_IDENTITY or any(c.isspace() for c in value):
        raise StoreError(f"invalid SSO identity {identity!r}: one word of 1 to {MAX_IDENTITY} "
                         "characters (an e-mail address or a subject)")
    return value.lower() if "@" in value else value


def link_sso(session: Session, *, name: str, identity: str | None, actor: str) -> User:
    """Link `identity` to user `name` (None: unlink); audited, and the user's sessions end.
    Refuses an identity linked to another user."""
    value = normal_identity(identity) if identity is not None else None
    row = session.scalars(select(UserRow).where(UserRow.name == name).with_for_update()).first()
    if row is None:
        raise StoreError(f"no user named {name!r}; `hat user list` shows the users")
    before = row.sso_identity
    row.sso_identity = value
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise StoreError(f"the SSO identity {value!r} is linked to another user; unlink it "
                         "there first") from None
    revoke_user_sessions(session, user_id=row.id)
    record_audit(session, actor=actor, action="user.set_sso", entity="user", entity_id=row.id,
                 before={"name": name, "sso_identity": before},
                 after={"name": name, "sso_identity": value})
    return to_value(User, row)


def sso_user(session: Session, *, identity: str) -> User | None:
    """The user linked to `identity`, or None."""
    row = session.scalars(select(UserRow).where(
        UserRow.sso_identity == normal_identity(identity))).first()
    return to_value(User, row) if row else None


def sso_token(key: str) -> str:
    """The session token of a sign-in: derived from its secret key, the same in every tab."""
    return f"sso-{key}"


def sso_login(session: Session, *, sign_in: SsoSignIn, ttl_s: int = SESSION_TTL_S,
              now: datetime | None = None) -> SsoResult:
    """The session of `sign_in`: the live one it opened before, else a new one for the user
    linked to its identity; or the refusal (audited when no user is linked). Commit the
    caller's transaction either way."""
    now = now or utcnow()
    token = sso_token(sign_in.key)
    seen = session.scalars(select(UserSessionRow.id).where(
        UserSessionRow.token_hash == token_hash(token))).first()
    if seen is not None:
        user = session_user(session, token=token, now=now)
        if user is None:
            return SsoResult(None, None, ENDED)
        return SsoResult(user, token, "")
    ends = sign_in.issued_at + timedelta(seconds=ttl_s)
    if ends <= now:
        return SsoResult(None, None, ENDED)
    user = sso_user(session, identity=sign_in.identity)
    if user is None:
        record_audit(session, actor="anonymous", action="login.sso_refused", entity="login",
                     entity_id=f"sso:{sign_in.identity[:150]}",
                     after={"identity": sign_in.identity[:MAX_IDENTITY]})
        return SsoResult(None, None, unknown_message(sign_in.identity))
    try:
        with session.begin_nested():
            open_session(session, user_id=user.id, client="console", token=token,
                         ttl_s=int((ends - now).total_seconds()), now=now)
    except IntegrityError:  # another tab of the same sign-in opened it first
        user = session_user(session, token=token, now=now)
        return SsoResult(user, token, "") if user else SsoResult(None, None, ENDED)
    return SsoResult(user, token, "")


ENDED = ("This sign-in has ended (logout, expiry, or a change to your account): sign in "
         "again.")


def unknown_message(identity: str) -> str:
    """What an identity linked to no user is told."""
    return (f"{identity} is not a HAT Ops user: no access. An admin can link it to a user "
            f"(`hat user set-sso NAME {identity}`).")
