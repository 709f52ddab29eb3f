"""Login sessions kept in the store: a random token for the holder, its sha256 for the row.

    token = open_session(s, user_id=user.id, client="console", ttl_s=SESSION_TTL_S)
    user = session_user(s, token=token)      # the user as stored now, or None
    revoke_session(s, token=token)           # logout
    revoke_user_sessions(s, user_id=user.id) # password or role change, removal

A session has an absolute expiry set when it opens and never extended; the user (and so the
role) is read from `users` on each lookup, so a role change or a removal counts at the next
request. The token (32 random bytes) exists only in the holder's memory or file: the store
has its hash, so a copy of the database does not log anyone in.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from db.errors import StoreError
from db.models import SESSION_CLIENTS, UserRow, UserSessionRow, utcnow
from db.rows import as_utc, to_value
from db.values import User

SESSION_TTL_S = 12 * 3600


def open_session(
    session: Session, *, user_id: int, client: str, ttl_s: int = SESSION_TTL_S,
    now: datetime | None = None, token: str | None = None,
) -> str:
    """A new session of user `user_id` that ends `ttl_s` seconds from now; its token (a random
    one, unless the caller derived one: an SSO sign-in's, `db.sso_repo`)."""
    if client not in SESSION_CLIENTS:
        raise StoreError(f"unknown session client {client!r}; valid: {', '.join(SESSION_CLIENTS)}")
    now = now or utcnow()
    token = token or secrets.token_urlsafe(32)
    session.add(UserSessionRow(token_hash=token_hash(token), user_id=user_id, client=client,
                               created_at=now, expires_at=now + timedelta(seconds=ttl_s)))
    session.flush()
    return token


def session_user(session: Session, *, token: str, now: datetime | None = None) -> User | None:
    """The user of a live session (not revoked, not expired) as stored now, else None."""
    if not token:
        return None
    row = session.execute(
        select(UserSessionRow, UserRow).join(UserRow, UserRow.id == UserSessionRow.user_id)
        .where(UserSessionRow.token_hash == token_hash(token))).first()
    if row is None:
        return None
    live, user = row
    if live.revoked_at is not None or as_utc(live.expires_at) <= (now or utcnow()):
        return None
    return to_value(User, user)


def revoke_session(session: Session, *, token: str) -> bool:
    """End the session of `token`; whether it was live."""
    result = session.execute(
        update(UserSessionRow)
        .where(UserSessionRow.token_hash == token_hash(token), UserSessionRow.revoked_at.is_(None))
        .values(revoked_at=utcnow()))
    return result.rowcount > 0


def revoke_user_sessions(session: Session, *, user_id: int) -> int:
    """End every live session of user `user_id`; how many were live."""
    result = session.execute(
        update(UserSessionRow)
        .where(UserSessionRow.user_id == user_id, UserSessionRow.revoked_at.is_(None))
        .values(revoked_at=utcnow()))
    return result.rowcount


def delete_user_sessions(session: Session, *, user_id: int) -> None:
    """Remove every session row of user `user_id` (before the user row itself goes)."""
    session.execute(delete(UserSessionRow).where(UserSessionRow.user_id == user_id))


def token_hash(token: str) -> str:
    """The hex sha256 of a token: what the store keeps."""
    return hashlib.sha256(token.encode()).hexdigest()
