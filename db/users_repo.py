"""Users of the console and CLI: a name, a role and an argon2id password hash.

Roles, weakest first: viewer, reviewer, operator, admin. Passwords are hashed with
argon2-cffi's `PasswordHasher` (argon2id); the hash never leaves `db/`. Names and passwords
follow `db.credentials` (an identifier; the password policy). Removing a user, changing a
role or a password is audited and ends every session of that user (`db.sessions_repo`);
the last admin can be neither removed nor demoted.
"""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.credentials import check_name, check_password
from db.errors import StoreError
from db.models import ROLES, UserRow, utcnow
from db.rows import to_value
from db.sessions_repo import delete_user_sessions, revoke_user_sessions
from db.values import User

_hasher = PasswordHasher()


def add_user(session: Session, *, name: str, role: str, password: str, actor: str) -> User:
    """Create a user; refuses an unknown role, a bad name or password, or a taken name."""
    _check_role(role)
    check_name(name)
    check_password(password, name=name)
    row = UserRow(name=name, role=role, password_hash=_hasher.hash(password), created_at=utcnow())
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError:
        raise StoreError(f"a user named {name!r} exists already") from None
    record_audit(
        session, actor=actor, action="user.add", entity="user", entity_id=row.id,
        after={"name": name, "role": role},
    )
    return to_value(User, row)


def set_role(session: Session, *, name: str, role: str, actor: str) -> User:
    """Give user `name` another role (audited; their sessions end)."""
    _check_role(role)
    row = _row(session, name)
    if row.role == "admin" and role != "admin":
        _keep_an_admin(session, f"demote {name}")
    before = row.role
    row.role = role
    session.flush()
    revoke_user_sessions(session, user_id=row.id)
    record_audit(session, actor=actor, action="user.set_role", entity="user", entity_id=row.id,
                 before={"name": name, "role": before}, after={"name": name, "role": role})
    return to_value(User, row)


def set_password(session: Session, *, name: str, password: str, actor: str) -> User:
    """Give user `name` a new password under the policy (audited; their sessions end)."""
    row = _row(session, name)
    check_password(password, name=name)
    row.password_hash = _hasher.hash(password)
    session.flush()
    revoke_user_sessions(session, user_id=row.id)
    record_audit(session, actor=actor, action="user.set_password", entity="user",
                 entity_id=row.id, after={"name": name})
    return to_value(User, row)


def remove_user(session: Session, *, name: str, actor: str) -> User:
    """Remove user `name` and their sessions (audited); a new user of that name is new."""
    row = _row(session, name)
    if row.role == "admin":
        _keep_an_admin(session, f"remove {name}")
    user = to_value(User, row)
    delete_user_sessions(session, user_id=row.id)
    session.delete(row)
    session.flush()
    record_audit(session, actor=actor, action="user.remove", entity="user", entity_id=user.id,
                 before={"name": name, "role": user.role})
    return user


def verify_user(session: Session, *, name: str, password: str) -> User | None:
    """The user if `password` is theirs, else None."""
    row = session.scalars(select(UserRow).where(UserRow.name == name)).first()
    if row is None:
        _hasher.hash(password)  # same cost either way: no user-enumeration by timing
        return None
    try:
        _hasher.verify(row.password_hash, password)
    except (VerificationError, InvalidHashError):
        return None
    return to_value(User, row)


def get_user(session: Session, *, name: str) -> User | None:
    """The user called `name`, or None."""
    row = session.scalars(select(UserRow).where(UserRow.name == name)).first()
    return to_value(User, row) if row else None


def count_users(session: Session) -> int:
    """How many users the store has (none: the first may be added without logging in)."""
    return session.scalar(select(func.count()).select_from(UserRow)) or 0


def list_users(session: Session) -> list[User]:
    """All users by name."""
    return [to_value(User, r) for r in session.scalars(select(UserRow).order_by(UserRow.name))]


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise StoreError(f"unknown role {role!r}; valid: {', '.join(ROLES)}")


def _row(session: Session, name: str) -> UserRow:
    row = session.scalars(select(UserRow).where(UserRow.name == name).with_for_update()).first()
    if row is None:
        raise StoreError(f"no user named {name!r}; `hat user list` shows the users")
    return row


def _keep_an_admin(session: Session, what: str) -> None:
    # lock every admin row: two admins demoting each other at once cannot both pass
    admins = session.scalars(select(UserRow.id).where(UserRow.role == "admin")
                             .with_for_update()).all()
    if len(admins) <= 1:
        raise StoreError(f"cannot {what}: it is the last admin; make another admin first")

