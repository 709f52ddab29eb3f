"""What a user name and a password must look like: the identifier pattern and the policy.

    check_name("ann.lee")                    # raises StoreError naming what is wrong
    password_problems("password1234", name="ann")   # ["it is a common password ..."]

Names are identifiers (a letter, then letters, digits, `.`, `_` or `-`; 64 at most), so a
name can never carry markdown, HTML or spaces into the console. A password needs
`MIN_PASSWORD` characters, not all blank or one repeated character, not the user's name, and
not on the shipped list of common passwords (`common_passwords.txt`, compared case-blind).
Pure: the CLI, the console and `db.users_repo` all call these.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from db.errors import StoreError

NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,63}")
MIN_PASSWORD = 12
COMMON = Path(__file__).resolve().parent / "common_passwords.txt"


def check_name(name: str) -> None:
    """Raise `StoreError` unless `name` matches the identifier pattern."""
    if not NAME_PATTERN.fullmatch(name):
        raise StoreError(
            f"invalid user name {name!r}: it must start with a letter and have only letters, "
            "digits, '.', '_' or '-' (64 characters at most)")


def password_problems(password: str, *, name: str) -> list[str]:
    """Every way `password` breaks the policy for user `name` (empty: acceptable)."""
    problems = []
    if len(password) < MIN_PASSWORD:
        problems.append(f"it has {len(password)} characters; at least {MIN_PASSWORD} needed")
    if not password.strip():
        problems.append("it is blank")
    elif len(set(password)) == 1:
        problems.append("it is one character repeated")
    if name and password.casefold() == name.casefold():
        problems.append("it is the user name")
    if password.strip().casefold() in common_passwords():
        problems.append("it is a common password (on the shipped list)")
    return problems


def check_password(password: str, *, name: str) -> None:
    """Raise `StoreError` listing every policy problem of `password`."""
    problems = password_problems(password, name=name)
    if problems:
        raise StoreError("password refused: " + "; ".join(problems))


@cache
def common_passwords() -> frozenset[str]:
    """The shipped list, case-folded (one password a line; `#` lines are comments)."""
    lines = COMMON.read_text(encoding="utf-8").splitlines()
    return frozenset(s.strip().casefold() for s in lines if s.strip() and not s.startswith("#"))
