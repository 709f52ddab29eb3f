"""Who runs a release or user command: an actor proven by a password or a saved login.

    hat login ann                 # password prompt (or --password-stdin); saves the login
    hat promote 3 --slot ab       # acts as ann, from the saved login
    hat logout                    # ends that login in the store and deletes the file

`authenticated_actor` never trusts a name alone. With a saved login (`$HAT_HOME/cli-session`,
mode 0600, written to a temporary file and renamed; it holds the session token of
`db.sessions_repo`, whose hash alone is in the store) and no other `--actor`, the actor is
that login's user, read fresh from the store. Otherwise the actor (`--actor`, default the
OS user) must give their password: on the first line of stdin with `--password-stdin`, else
at a hidden prompt. Password checks go through the login throttle (`db.login_repo`), the
client being `cli:<OS user>`. `acting_user` adds the role check of a console action
(`ui.auth.PERMISSIONS`): `hat harness submit --author`, `hat pairwise create --actor` and
`hat ab analyze --save --actor` need the role the console asks for the same change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from sqlalchemy.orm import Session, sessionmaker

from db.engine import in_transaction
from db.file_modes import private_dir, write_atomically
from db.login_repo import attempt_login
from db.sessions_repo import revoke_session, session_user
from db.users_repo import count_users
from db.values import User
from hat_cli.db_cmd import open_store, whoami
from hat_cli.errors import exits_on_error
from hat_core.errors import HatError
from hat_core.settings import load_settings
from ui.auth import PERMISSIONS, can

SAVED = "cli-session"


def saved_login_path() -> Path:
    """Where `hat login` keeps its session token: `$HAT_HOME/cli-session`."""
    return Path(load_settings().home) / SAVED


def read_password(from_stdin: bool, prompt: str) -> str:
    """One password: the next line of stdin, or a hidden prompt on a terminal."""
    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise HatError("no password on stdin")
        return password
    if not sys.stdin.isatty():
        raise HatError(f"{prompt}: no terminal to ask on; give --password-stdin "
                       "or run `hat login NAME` first")
    return typer.prompt(prompt, hide_input=True)


def authenticated_actor(factory: sessionmaker[Session], *, actor: str | None,
                        password_stdin: bool) -> User:
    """The user this command acts as, proven by the saved login or by a password."""
    saved = _saved()
    if saved is not None and actor in (None, saved["name"]):
        with factory() as s:
            user = session_user(s, token=saved["token"])
        if user is None:
            raise HatError(f"the saved login of {saved['name']} has ended (logout, expiry, or "
                           f"a password or role change): run `hat login {saved['name']}` again")
        return user
    name = actor or whoami()
    password = read_password(password_stdin, f"Password of {name}")
    result = in_transaction(factory, lambda s: attempt_login(
        s, name=name, password=password, client_address=f"cli:{whoami()}", client="cli",
        ttl_s=None))
    if result.user is None:
        raise HatError(f"not acting as {name}: {result.refusal}")
    return result.user


def acting_user(factory: sessionmaker[Session], *, actor: str | None, password_stdin: bool,
                action: str) -> User:
    """The proven actor of a change (`authenticated_actor`), if their role may do `action`
    (the console's permission, e.g. `harness.submit`); else a `HatError` saying why."""
    with factory() as s:
        if count_users(s) == 0:
            raise HatError("the store has no users, so nobody can be proven to act: add an "
                           "admin first (`hat user add NAME --role admin`), then `hat login`")
    user = authenticated_actor(factory, actor=actor, password_stdin=password_stdin)
    if not can(user.role, action):
        raise HatError(f"{user.name} is {user.role}: {action} needs the "
                       f"{PERMISSIONS[action]} role or above")
    return user


def require_admin(user: User) -> User:
    """`user`, if an admin (who alone may manage users)."""
    if user.role != "admin":
        raise HatError(f"{user.name} is {user.role}: managing users needs the admin role")
    return user


@exits_on_error
def login(
    name: str = typer.Argument(None, help="user name (default: the OS user)"),
    password_stdin: bool = typer.Option(False, "--password-stdin",
                                        help="read the password from the first line of stdin"),
) -> None:
    """Log in for the CLI: later release and user commands act as this user."""
    factory = open_store()
    name = name or whoami()
    password = read_password(password_stdin, f"Password of {name}")
    result = in_transaction(factory, lambda s: attempt_login(
        s, name=name, password=password, client_address=f"cli:{whoami()}", client="cli"))
    if result.token is None:
        raise HatError(f"login refused: {result.refusal}")
    _save({"name": result.user.name, "token": result.token})
    typer.echo(f"logged in as {result.user.name} ({result.user.role}) for 12 hours; "
               "`hat logout` ends it")


@exits_on_error
def logout() -> None:
    """End the saved CLI login (in the store too) and delete its file."""
    saved = _saved()
    if saved is None:
        typer.echo("not logged in")
        return
    in_transaction(open_store(), lambda s: revoke_session(s, token=saved["token"]))
    saved_login_path().unlink(missing_ok=True)
    typer.echo(f"logged out {saved['name']}")


def _saved() -> dict | None:
    path = saved_login_path()
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HatError(f"{path}: unreadable saved login ({exc}); delete it and "
                       "run `hat login`") from None
    if not isinstance(data, dict) or not {"name", "token"} <= set(data):
        raise HatError(f"{path}: not a saved login (no name and token); delete it and "
                       "run `hat login`")
    return data


def _save(data: dict) -> None:
    path = saved_login_path()
    private_dir(path.parent)
    write_atomically(path, json.dumps(data))
