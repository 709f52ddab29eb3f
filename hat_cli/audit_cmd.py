"""`hat audit verify`: check the audit log's hash chain (`db.audit_chain`).

    hat audit verify        # exit 0: "N entries, chain intact, head <hash>"; exit 2: every break

Keep the printed head hash outside the store (a ticket, the release notes): a later run whose
chain does not pass through it shows that the newest entries were removed.
"""

from __future__ import annotations

import typer

from db.audit_chain import verify_chain
from hat_cli.db_cmd import open_store
from hat_cli.errors import exits_on_error
from hat_core.errors import HatError, Problem

app = typer.Typer(help="Check the audit log.", no_args_is_help=True)


@app.command("verify")
@exits_on_error
def verify() -> None:
    """Recompute the audit log's hash chain; exit 2 listing every broken entry."""
    with open_store()() as session:
        report = verify_chain(session)
    if not report.ok:
        raise HatError(f"the audit log's hash chain is broken ({report.entries} entries read)",
                       [Problem("audit_log", p) for p in report.problems])
    typer.echo(f"{report.entries} entries, chain intact, head {report.head or '(empty)'}")
