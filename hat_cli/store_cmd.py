"""`hat harness submit|list|show`: harness versions in the SQL store.

These commands register themselves on the `hat harness` group (`hat_cli.harness_cmd.app`).
A stored version is named `N` (when the store holds one harness line) or `LINE:N`. Commands
refuse (exit 2) a database that is not migrated: run `hat db upgrade` first.

`submit` stores a version under a proven author (`hat_cli.login_cmd.acting_user`): the saved
`hat login`, or the password of `--author NAME` (default the OS user) from a hidden prompt
or `--password-stdin`; the author needs the operator role or above, as on the console.

`submit` emits the harness-change Prefect event after the commit when a Prefect API is
configured (`HAT_PREFECT_API_URL`/`PREFECT_API_URL`); if that fails it warns and exits 0: the
version is stored and the reconciler of `hat serve` delivers it from the outbox.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from db.engine import in_transaction
from db.harness_repo import find_version_by_hash, list_versions, submit_harness
from hat_cli.db_cmd import open_store
from hat_cli.errors import exits_on_error
from hat_cli.harness_args import load_stored_version
from hat_cli.harness_cmd import app
from hat_cli.login_cmd import acting_user
from hat_core.events import announce_version_created, prefect_api_url
from hat_core.harness.io import dump_harness, load_harness
from hat_core.harness.render import render
from hat_core.settings import load_settings


@app.command()
@exits_on_error
def submit(
    file: Path = typer.Argument(..., help="harness file (.yaml or .json)"),
    author: str = typer.Option(None, "--author", help="who made it (default: the saved "
                                                      "`hat login`, else the OS user); proven "
                                                      "by a password"),
    note: str = typer.Option("", "--note", help="what changed and why"),
    password_stdin: bool = typer.Option(False, "--password-stdin",
                                        help="read the author's password from stdin's first "
                                             "line"),
) -> None:
    """Validate FILE and store it as a new version; print its number.

    Identical content returns the stored version's number instead of a duplicate.
    """
    harness = load_harness(file)
    factory = open_store()
    author = acting_user(factory, actor=author, password_stdin=password_stdin,
                         action="harness.submit").name
    with factory() as session:
        known = find_version_by_hash(
            session, line=harness.harness, content_hash=harness.content_hash()
        )
    version = in_transaction(
        factory, lambda s: submit_harness(s, harness=harness, author=author, note=note)
    )
    what = "identical to stored" if known else "stored new"
    typer.echo(
        f"{what} version {version.number} of {version.line} (hash {version.content_hash[:12]})",
        err=True,
    )
    if not known:
        _announce(version.line, version.number)
    typer.echo(version.number)


def _announce(line: str, number: int) -> None:
    """The harness-change event, when a Prefect API is configured (a warning if it fails)."""
    api_url = prefect_api_url(load_settings().prefect_api_url)
    if api_url is None:
        return
    sent = announce_version_created(line, number, api_url=api_url, emitter="cli")
    typer.echo(sent.message if sent.ok else f"warning: {sent.message}", err=True)


@app.command("list")
@exits_on_error
def list_cmd(
    line: str = typer.Option(None, "--line", help="only this harness line"),
    limit: int = typer.Option(50, "--limit", min=1, help="how many, newest first"),
) -> None:
    """List stored harness versions, newest first."""
    with open_store()() as session:
        versions = list_versions(session, line=line, limit=limit)
    typer.echo("line\tversion\thash\tauthor\tcreated\tnote")
    for v in versions:
        typer.echo(
            f"{v.line}\t{v.number}\t{v.content_hash[:12]}\t{v.author}\t"
            f"{v.created_at:%Y-%m-%d %H:%M}\t{v.note}"
        )


@app.command()
@exits_on_error
def show(
    version: str = typer.Argument(..., help="version number N or LINE:N"),
    rendered: bool = typer.Option(False, "--rendered", help="the system prompt and tools instead"),
    as_json: bool = typer.Option(False, "--json", help="the document as JSON"),
) -> None:
    """Print a stored version: its metadata and document (or what the model sees)."""
    stored = load_stored_version(version)
    harness = stored.harness()
    if rendered:
        view = render(harness)
        typer.echo(view.system_prompt)
        typer.echo("\n# tools")
        typer.echo(json.dumps(view.tools, ensure_ascii=False, indent=2))
        return
    parent = stored.parent_number if stored.parent_number is not None else "-"
    typer.echo(
        f"# {stored.line} version {stored.number}, parent {parent}, hash {stored.content_hash}\n"
        f"# by {stored.author} at {stored.created_at:%Y-%m-%d %H:%M:%S %Z}: {stored.note}"
    )
    typer.echo(dump_harness(harness, "json" if as_json else "yaml"), nl=False)
