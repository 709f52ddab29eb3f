"""`hat promote MODEL_VERSION --slot ab` and `hat rollback --slot ab --reason R` (docs/flows.md).

The actor is proven, never just named (`hat_cli.login_cmd.authenticated_actor`): the saved
`hat login`, or the password of `--actor NAME` (default the OS user) from a hidden prompt or
`--password-stdin`. It must be a user of the store with role operator or admin. A version
that failed its gates, or whose gates were inconclusive, is refused unless an admin gives
`--override-reason`; a rollback needs a reason. Both commands are the one release path
(`db.promotion`) that the console's release page uses too: MLflow aliases first, then the
store's promotion row.
"""

from __future__ import annotations

import typer

from hat_cli.db_cmd import open_store
from hat_cli.errors import exits_on_error
from hat_cli.login_cmd import authenticated_actor
from hat_core.errors import HatError
from hat_core.settings import load_settings

SLOT = typer.Option("ab", "--slot", help="serving slot")
ACTOR = typer.Option(None, "--actor", help="who does it (default: the saved `hat login`, "
                                           "else the OS user); proven by a password")
PASSWORD_STDIN = typer.Option(False, "--password-stdin",
                              help="read the actor's password from the first line of stdin")
REGISTRY = typer.Option(None, "--registry-name", help="registered model (default: config)")


def _registry(name: str | None) -> str:
    from flows.config import load_retrain_config

    return name or load_retrain_config().registry_name


@exits_on_error
def promote(
    model_version: str = typer.Argument(..., help="registered model version number"),
    slot: str = SLOT,
    override_reason: str = typer.Option("", "--override-reason",
                                        help="admin only: promote despite failed or "
                                             "inconclusive gates"),
    actor: str = ACTOR,
    password_stdin: bool = PASSWORD_STDIN,
    registry_name: str = REGISTRY,
) -> None:
    """Make MODEL_VERSION the champion (alias `champion`; the old one `previous-champion`)."""
    from db.promotion import promote_slot
    from flows.retrain import make_tracking

    sessions = open_store()
    user = authenticated_actor(sessions, actor=actor, password_stdin=password_stdin)
    result = promote_slot(
        sessions, make_tracking(load_settings()), registry_name=_registry(registry_name),
        version=model_version, actor=user.name, slot=slot, override_reason=override_reason)
    what = "promoted" if result.changed else "already the champion:"
    typer.echo(f"{what} version {result.version} in slot {slot}"
               + (f" (previous champion {result.previous_version})"
                  if result.previous_version else ""))


@exits_on_error
def rollback(
    reason: str = typer.Option(..., "--reason", help="why the champion goes back (audited)"),
    slot: str = SLOT,
    actor: str = ACTOR,
    password_stdin: bool = PASSWORD_STDIN,
    registry_name: str = REGISTRY,
) -> None:
    """Give the champion alias back to the version the current champion replaced."""
    from db.promotion import rollback_slot
    from flows.retrain import make_tracking

    if not reason.strip():
        raise HatError("--reason is blank: say why the slot goes back")
    sessions = open_store()
    user = authenticated_actor(sessions, actor=actor, password_stdin=password_stdin)
    result = rollback_slot(sessions, make_tracking(load_settings()),
                           registry_name=_registry(registry_name), actor=user.name,
                           slot=slot, reason=reason)
    typer.echo(f"rolled back slot {slot} to version {result.version} "
               f"(was {result.previous_version})")
