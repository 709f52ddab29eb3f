"""`hat audit verify` and `hat audit anchor`: check the audit log's hash chain
(`db.audit_chain`), and keep its head outside the database.

    hat audit verify                      # exit 0: "N entries, chain intact, head <hash>"
    hat audit anchor --out anchor.json    # the chain verified, then its head written to FILE
    hat audit verify --anchor anchor.json # exit 2 also when the anchored head is gone

A deleted or changed entry breaks the chain; deleting the newest entries does not, so keep an
anchor (the number of entries, the newest id and its hash, as JSON) somewhere the database's
owner cannot rewrite (a ticket, another host, the release notes) and verify against it: the
anchored entry must still be there, with its hash, after as many entries.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from db.audit_chain import AuditAnchor, verify_chain
from db.file_modes import write_atomically
from hat_cli.db_cmd import open_store
from hat_cli.errors import exits_on_error
from hat_core.errors import ConfigError, HatError, NotFoundError, Problem

app = typer.Typer(help="Check the audit log.", no_args_is_help=True)


@app.command("verify")
@exits_on_error
def verify(
    anchor: Path = typer.Option(None, "--anchor", help="an anchor file of `hat audit anchor`: "
                                                       "its head must still be in the log"),
) -> None:
    """Recompute the audit log's hash chain; exit 2 listing every broken entry."""
    kept = read_anchor(anchor) if anchor is not None else None
    with open_store()() as session:
        report = verify_chain(session, anchor=kept)
    if not report.ok:
        raise HatError(f"the audit log's hash chain is broken ({report.entries} entries read)",
                       [Problem("audit_log", p) for p in report.problems])
    typer.echo(f"{report.entries} entries, chain intact, head {report.head or '(empty)'}"
               + (f"; anchor {anchor} (entry {kept.head_id}) found" if kept else ""))


@app.command("anchor")
@exits_on_error
def anchor_cmd(
    out: Path = typer.Option(..., "--out", help="the anchor file (JSON) to write"),
) -> None:
    """Verify the chain, then write its head (entries, newest id, hash) to --out."""
    with open_store()() as session:
        report = verify_chain(session)
    if not report.ok:
        raise HatError("the audit log's hash chain is broken: no anchor written",
                       [Problem("audit_log", p) for p in report.problems])
    kept = report.anchor()
    write_anchor(kept, out)
    typer.echo(f"anchored {kept.entries} entries at entry {kept.head_id} "
               f"(head {kept.head or '(empty)'}) in {out}")


def write_anchor(anchor: AuditAnchor, path: Path) -> None:
    """`anchor` as JSON at `path` (a temporary file in the same folder, then a rename)."""
    write_atomically(path, json.dumps({"entries": anchor.entries, "head_id": anchor.head_id,
                                       "head": anchor.head}, indent=2) + "\n", mode=0o644)


def read_anchor(path: Path) -> AuditAnchor:
    """The anchor in `path`; a `ConfigError` naming the file and what is wrong."""
    if not path.is_file():
        raise NotFoundError(f"no such anchor file: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path}: not an anchor file", [Problem(str(path), str(exc))]) from None
    problems = []
    if not isinstance(data, dict):
        data = {}
        problems.append(Problem(str(path), "not a JSON object"))
    for key in ("entries", "head_id"):
        value = data.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            problems.append(Problem(f"{path}: {key}", "a whole number >= 0"))
    head = data.get("head")
    if not isinstance(head, str) or not (head == "" or len(head) == 64):
        problems.append(Problem(f"{path}: head", "a sha256 hex digest (64 characters)"))
    if problems:
        raise ConfigError(f"{path}: not an anchor file", problems)
    return AuditAnchor(entries=data["entries"], head_id=data["head_id"], head=head)
