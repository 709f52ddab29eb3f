"""`hat user add|list`: console and CLI users with roles and argon2id password hashes."""

from __future__ import annotations

import sys

import typer

from db.credentials import check_name
from db.engine import in_transaction
from db.models import ROLES
from db.users_repo import add_user, list_users
from hat_cli.db_cmd import open_store, whoami
from hat_cli.errors import exits_on_error
from hat_core.errors import HatError

app = typer.Typer(help="Manage users and roles.", no_args_is_help=True)


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise HatError("no password on stdin")
        return password
    return typer.prompt("Password", hide_input=True, confirmation_prompt=True)


@app.command("add")
@exits_on_error
def add(
    name: str = typer.Argument(..., help="user name"),
    role: str = typer.Option(..., "--role", help="viewer, reviewer, operator or admin"),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="read the password from the first line of stdin"
    ),
    actor: str = typer.Option(None, "--actor", help="who adds (audit; default: you)"),
) -> None:
    """Add a user; the password comes from a hidden prompt (or stdin)."""
    if role not in ROLES:
        raise HatError(f"unknown role {role!r}; valid: {', '.join(ROLES)}")
    check_name(name)  # before asking for a password
    factory = open_store()
    actor = actor or whoami()
    password = _read_password(password_stdin)
    user = in_transaction(
        factory, lambda s: add_user(s, name=name, role=role, password=password, actor=actor)
    )
    typer.echo(f"added user {user.name} ({user.role})")


@app.command("list")
@exits_on_error
def list_cmd() -> None:
    """List users and their roles."""
    factory = open_store()
    with factory() as session:
        users = list_users(session)
    for user in users:
        typer.echo(f"{user.name}\t{user.role}\t{user.created_at:%Y-%m-%d %H:%M}")
