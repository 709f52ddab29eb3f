"""`hat user add|list|remove|set-role|set-password`: console and CLI users with roles and
argon2id password hashes. Every change is audited; a removal, a role or a password change
ends that user's sessions (console and CLI)."""

from __future__ import annotations

import sys

import typer

from db.credentials import check_name
from db.engine import in_transaction
from db.models import ROLES
from db.users_repo import add_user, list_users, remove_user, set_password, set_role
from hat_cli.db_cmd import open_store, whoami
from hat_cli.errors import exits_on_error
from hat_core.errors import HatError

app = typer.Typer(help="Manage users and roles.", no_args_is_help=True)
NAME = typer.Argument(..., help="user name")
PASSWORD_STDIN = typer.Option(False, "--password-stdin",
                              help="read the password from the first line of stdin")
ACTOR = typer.Option(None, "--actor", help="who does it (audit; default: you)")


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise HatError("no password on stdin")
        return password
    return typer.prompt("Password", hide_input=True, confirmation_prompt=True)


def _role(role: str) -> str:
    if role not in ROLES:
        raise HatError(f"unknown role {role!r}; valid: {', '.join(ROLES)}")
    return role


@app.command("add")
@exits_on_error
def add(
    name: str = NAME,
    role: str = typer.Option(..., "--role", help="viewer, reviewer, operator or admin"),
    password_stdin: bool = PASSWORD_STDIN,
    actor: str = ACTOR,
) -> None:
    """Add a user; the password comes from a hidden prompt (or stdin)."""
    _role(role)
    check_name(name)
    factory = open_store()
    actor = actor or whoami()
    password = _read_password(password_stdin)
    user = in_transaction(
        factory, lambda s: add_user(s, name=name, role=role, password=password, actor=actor)
    )
    typer.echo(f"added user {user.name} ({user.role})")


@app.command("set-role")
@exits_on_error
def set_role_cmd(
    name: str = NAME,
    role: str = typer.Option(..., "--role", help="viewer, reviewer, operator or admin"),
    actor: str = ACTOR,
) -> None:
    """Give a user another role; their sessions end."""
    _role(role)
    factory = open_store()
    actor = actor or whoami()
    user = in_transaction(factory, lambda s: set_role(s, name=name, role=role, actor=actor))
    typer.echo(f"user {user.name} is now {user.role}; their sessions ended")


@app.command("set-password")
@exits_on_error
def set_password_cmd(name: str = NAME, password_stdin: bool = PASSWORD_STDIN,
                     actor: str = ACTOR) -> None:
    """Give a user a new password (hidden prompt, or stdin); their sessions end."""
    factory = open_store()
    actor = actor or whoami()
    password = _read_password(password_stdin)
    user = in_transaction(factory, lambda s: set_password(s, name=name, password=password,
                                                          actor=actor))
    typer.echo(f"password of {user.name} changed; their sessions ended")


@app.command("remove")
@exits_on_error
def remove(name: str = NAME, actor: str = ACTOR) -> None:
    """Remove a user and their sessions (the last admin stays)."""
    factory = open_store()
    actor = actor or whoami()
    user = in_transaction(factory, lambda s: remove_user(s, name=name, actor=actor))
    typer.echo(f"removed user {user.name} ({user.role})")


@app.command("list")
@exits_on_error
def list_cmd() -> None:
    """List users and their roles."""
    factory = open_store()
    with factory() as session:
        users = list_users(session)
    for user in users:
        typer.echo(f"{user.name}\t{user.role}\t{user.created_at:%Y-%m-%d %H:%M}")
