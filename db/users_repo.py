"""Users of the console and CLI: a name, a role and an argon2id password hash.

Roles, weakest first: viewer, reviewer, operator, admin. Passwords are hashed with
argon2-cffi's `PasswordHasher` (argon2id); the hash never leaves `db/`. Names and passwords
follow `db.credentials` (an identifier; the password policy).
"""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.credentials import check_name, check_password
from db.errors import StoreError
from db.models import ROLES, UserRow, utcnow
from db.rows import to_value
from db.values import User

_hasher = PasswordHasher()


def add_user(session: Session, *, name: str, role: str, password: str, actor: str) -> User:
    """Create a user; refuses an unknown role, a bad name or password, or a taken name."""
    if role not in ROLES:
        raise StoreError(f"unknown role {role!r}; valid: {', '.join(ROLES)}")
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


def list_users(session: Session) -> list[User]:
    """All users by name."""
    return [to_value(User, r) for r in session.scalars(select(UserRow).order_by(UserRow.name))]
