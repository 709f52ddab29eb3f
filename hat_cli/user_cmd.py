"""`hat user add|list|remove|set-role|set-password|set-sso`: console and CLI users with roles
and argon2id password hashes, and the SSO identity that logs in as a user on the console.

Changes need an admin, proven by `hat login` or a password (`hat_cli.login_cmd`); only the
first user of an empty store is added without one, and must be an admin. With
`--password-stdin` and no saved login, stdin's first line is the acting admin's password
and the next one the new password (`add`, `set-password`). Every change is audited; a
removal, a role or a password change ends that user's sessions (console and CLI), and so
does linking or unlinking an SSO identity (`hat user set-sso NAME ann@example.com | --clear`).
"""

from __future__ import annotations

import sys

import typer

from db.credentials import check_name
from db.engine import in_transaction
from db.models import ROLES
from db.sso_repo import link_sso
from db.users_repo import (
    add_user,
    count_users,
    list_users,
    remove_user,
    set_password,
    set_role,
)
from hat_cli.db_cmd import open_store, whoami
from hat_cli.errors import exits_on_error
from hat_cli.login_cmd import authenticated_actor, read_password, require_admin
from hat_core.errors import HatError

app = typer.Typer(help="Manage users and roles.", no_args_is_help=True)
NAME = typer.Argument(..., help="user name")
PASSWORD_STDIN = typer.Option(
    False, "--password-stdin",
    help="passwords from stdin, one a line: the acting admin's (unless `hat login`), then "
         "the new one")
ACTOR = typer.Option(None, "--actor", help="the acting admin (default: the saved login, "
                                           "else the OS user); proven by a password")
ROLE = typer.Option(..., "--role", help="viewer, reviewer, operator or admin")


def _new_password(from_stdin: bool) -> str:
    if from_stdin:
        return read_password(True, "New password")
    if not sys.stdin.isatty():
        raise HatError("New password: no terminal to ask on; give --password-stdin")
    return typer.prompt("New password", hide_input=True, confirmation_prompt=True)


def _role(role: str) -> str:
    if role not in ROLES:
        raise HatError(f"unknown role {role!r}; valid: {', '.join(ROLES)}")
    return role


def _admin(factory, actor: str | None, password_stdin: bool) -> str:
    user = authenticated_actor(factory, actor=actor, password_stdin=password_stdin)
    return require_admin(user).name


@app.command("add")
@exits_on_error
def add(name: str = NAME, role: str = ROLE, password_stdin: bool = PASSWORD_STDIN,
        actor: str = ACTOR) -> None:
    """Add a user (the first user of an empty store: an admin, added without a login)."""
    _role(role)
    check_name(name)
    factory = open_store()
    with factory() as s:
        first = count_users(s) == 0
    if first and role != "admin":
        raise HatError("the store has no users: the first one must be an admin "
                       "(`--role admin`), or nobody could manage users")
    who = (actor or whoami()) if first else _admin(factory, actor, password_stdin)
    password = _new_password(password_stdin)
    user = in_transaction(
        factory, lambda s: add_user(s, name=name, role=role, password=password, actor=who))
    typer.echo(f"added user {user.name} ({user.role})")


@app.command("set-role")
@exits_on_error
def set_role_cmd(name: str = NAME, role: str = ROLE, password_stdin: bool = PASSWORD_STDIN,
                 actor: str = ACTOR) -> None:
    """Give a user another role; their sessions end (the last admin stays an admin)."""
    _role(role)
    factory = open_store()
    who = _admin(factory, actor, password_stdin)
    user = in_transaction(factory, lambda s: set_role(s, name=name, role=role, actor=who))
    typer.echo(f"user {user.name} is now {user.role}; their sessions ended")


@app.command("set-password")
@exits_on_error
def set_password_cmd(name: str = NAME, password_stdin: bool = PASSWORD_STDIN,
                     actor: str = ACTOR) -> None:
    """Give a user a new password (hidden prompt, or stdin); their sessions end."""
    factory = open_store()
    who = _admin(factory, actor, password_stdin)
    password = _new_password(password_stdin)
    user = in_transaction(factory, lambda s: set_password(s, name=name, password=password,
                                                          actor=who))
    typer.echo(f"password of {user.name} changed; their sessions ended")


@app.command("remove")
@exits_on_error
def remove(name: str = NAME, password_stdin: bool = PASSWORD_STDIN,
           actor: str = ACTOR) -> None:
    """Remove a user and their sessions (the last admin stays)."""
    factory = open_store()
    who = _admin(factory, actor, password_stdin)
    user = in_transaction(factory, lambda s: remove_user(s, name=name, actor=who))
    typer.echo(f"removed user {user.name} ({user.role})")


@app.command("set-sso")
@exits_on_error
def set_sso_cmd(
    name: str = NAME,
    identity: str = typer.Argument(None, help="the value of the SSO claim (HAT_SSO_CLAIM: an "
                                              "e-mail address, or a subject) for this user"),
    clear: bool = typer.Option(False, "--clear", help="unlink the user's SSO identity"),
    password_stdin: bool = PASSWORD_STDIN, actor: str = ACTOR,
) -> None:
    """Link the SSO identity that logs in as this user on the console (or --clear it)."""
    if (identity is None) == (not clear):
        raise HatError("give an IDENTITY or --clear (one of them)")
    factory = open_store()
    who = _admin(factory, actor, password_stdin)
    user = in_transaction(factory, lambda s: link_sso(s, name=name, identity=identity,
                                                      actor=who))
    typer.echo(f"user {user.name}: SSO identity {user.sso_identity or 'none'}; their sessions "
               "ended")


@app.command("list")
@exits_on_error
def list_cmd() -> None:
    """List users: name, role, created, SSO identity (`-` when none)."""
    factory = open_store()
    with factory() as session:
        users = list_users(session)
    for user in users:
        typer.echo(f"{user.name}\t{user.role}\t{user.created_at:%Y-%m-%d %H:%M}\t"
                   f"{user.sso_identity or '-'}")
