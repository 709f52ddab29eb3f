"""Logging in: the password check behind a throttle, then a new session.

    result = attempt_login(s, name="ann", password=pw, client_address="10.0.0.7")
    result.token      # the new session's token (`db.sessions_repo`), or None
    result.refusal    # why not: wrong password, or a lockout and when it ends

Failed attempts are counted per user name (`user:NAME`) and per client (`client:ADDRESS`)
in `login_throttles`, in the store, so a restart does not reset them. `POLICY.user_failures`
failures of one name within `window_s`, or `client_failures` from one client, lock that key
for `lockout_s`; while locked, attempts are refused without checking the password, and each
lockout writes an audit entry (`login.lockout`). A success clears the name's count.
Unknown names count like known ones, so the answer does not tell which names exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.models import LoginThrottleRow, utcnow
from db.rows import as_utc
from db.sessions_repo import SESSION_TTL_S, open_session
from db.users_repo import verify_user
from db.values import User

WRONG = "Unknown user or wrong password."


@dataclass(frozen=True)
class ThrottlePolicy:
    """How many failures within a window lock a user name or a client, and for how long."""

    user_failures: int = 5
    client_failures: int = 20
    window_s: int = 15 * 60
    lockout_s: int = 15 * 60


POLICY = ThrottlePolicy()


@dataclass(frozen=True)
class LoginResult:
    """A login: the user and session token on success, else the reason it was refused."""

    user: User | None
    token: str | None
    refusal: str


def attempt_login(
    session: Session, *, name: str, password: str, client_address: str | None,
    client: str = "console", ttl_s: int | None = SESSION_TTL_S, policy: ThrottlePolicy = POLICY,
    now: datetime | None = None,
) -> LoginResult:
    """Check `password` unless `name` or the client is locked out; count a failure, or open
    a session of `ttl_s` seconds (`None`: check only, no session: the CLI's per-command
    proof). Commit the caller's transaction either way."""
    now = now or utcnow()
    keys = {user_key(name): policy.user_failures,
            client_key(client_address): policy.client_failures}
    locked = locked_until(session, keys=list(keys), now=now)
    if locked is not None:
        return LoginResult(None, None, lockout_message(locked))
    user = verify_user(session, name=name, password=password)
    if user is None:
        ends = [_fail(session, key, limit, policy, now, name, client_address)
                for key, limit in keys.items()]
        ends = [e for e in ends if e is not None]
        return LoginResult(None, None, lockout_message(max(ends)) if ends else WRONG)
    session.execute(delete(LoginThrottleRow).where(LoginThrottleRow.key == user_key(name)))
    token = (None if ttl_s is None else
             open_session(session, user_id=user.id, client=client, ttl_s=ttl_s, now=now))
    return LoginResult(user, token, "")


def locked_until(session: Session, *, keys: list[str], now: datetime) -> datetime | None:
    """The latest lockout end among `keys` that is still ahead of `now`, else None."""
    ends = []
    for key in keys:
        row = session.get(LoginThrottleRow, key)
        if row is not None and row.locked_until is not None and as_utc(row.locked_until) > now:
            ends.append(as_utc(row.locked_until))
    return max(ends) if ends else None


def lockout_message(until: datetime) -> str:
    """What a locked-out user is told (the same for a name and a client)."""
    return (f"Too many failed logins for this user or from this address: try again after "
            f"{until:%H:%M:%S} UTC.")


def user_key(name: str) -> str:
    return f"user:{name[:150]}"


def client_key(address: str | None) -> str:
    return f"client:{(address or 'local')[:150]}"


def _fail(session: Session, key: str, limit: int, policy: ThrottlePolicy, now: datetime,
          name: str, address: str | None) -> datetime | None:
    """Count one failure of `key`; the lockout end if this failure starts one."""
    row = _throttle(session, key, now)
    if as_utc(row.window_start) + timedelta(seconds=policy.window_s) <= now:
        row.failures, row.window_start = 0, now
    row.failures += 1
    if row.failures < limit:
        session.flush()
        return None
    row.locked_until = now + timedelta(seconds=policy.lockout_s)
    row.failures, row.window_start = 0, now
    session.flush()
    record_audit(session, actor="anonymous", action="login.lockout", entity="login",
                 entity_id=key, after={"name": name[:150], "client": address or "local",
                                       "failures": limit,
                                       "locked_until": row.locked_until.isoformat()})
    return row.locked_until


def _throttle(session: Session, key: str, now: datetime) -> LoginThrottleRow:
    # locked until commit (PostgreSQL): two failures at once both count
    row = session.get(LoginThrottleRow, key, with_for_update=True, populate_existing=True)
    if row is not None:
        return row
    try:
        with session.begin_nested():
            row = LoginThrottleRow(key=key, failures=0, window_start=now, locked_until=None)
            session.add(row)
    except IntegrityError:  # a concurrent failure made it first
        row = session.get(LoginThrottleRow, key, populate_existing=True, with_for_update=True)
    return row
