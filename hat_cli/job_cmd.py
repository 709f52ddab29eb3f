"""`hat job list|show|retry`: retrain jobs in the SQL store, and an operator's retry.

After a restart of `hat serve`, an interrupted job (SIGTERM, lost lease, unreachable store)
shows as `interrupted` with the stage it reached and resumes by itself; a job that failed by
itself (bad data, a refused gate, or too many interruptions) stays `failed` until an operator
runs `hat job retry N` (or presses Retry on the console's job page): the job is queued again
and the reconciler of `hat serve` resumes it at the stage it reached (docs/operations.md).
The actor is proven as for `hat promote` (`hat login`, or a password) and needs the operator
role or above.
"""

from __future__ import annotations

import json

import typer

from db.engine import in_transaction
from hat_cli.db_cmd import open_store
from hat_cli.errors import exits_on_error
from hat_cli.login_cmd import authenticated_actor
from hat_cli.release_cmd import ACTOR, PASSWORD_STDIN
from hat_core.errors import HatError

app = typer.Typer(help="Retrain jobs: list, show, retry a failed one.", no_args_is_help=True)
RETRY_ROLES = ("operator", "admin")


@app.command("list")
@exits_on_error
def list_(
    state: str = typer.Option(None, "--state", help="only jobs in this state"),
    limit: int = typer.Option(20, "--limit", min=1, help="newest N jobs"),
) -> None:
    """Newest jobs first: id, version, trigger, state, attempts, stage reached, reason."""
    from db.jobs_repo import list_jobs

    with open_store()() as s:
        jobs = list_jobs(s, state=state, limit=limit)
    for j in jobs:
        typer.echo(f"{j.id}\tv{j.harness_version_id}\t{j.trigger}\t{j.state}\t"
                   f"attempts {j.attempts}\tstage {j.stage or '-'}\t{j.reason[:80]}")


@app.command()
@exits_on_error
def show(job_id: int = typer.Argument(..., help="job id")) -> None:
    """One job as JSON, with its history of stops and retries."""
    from dataclasses import asdict

    from db.jobs_repo import get_job

    with open_store()() as s:
        job = get_job(s, job_id=job_id)
    typer.echo(json.dumps(asdict(job), ensure_ascii=False, indent=2, default=str))


@app.command()
@exits_on_error
def retry(
    job_id: int = typer.Argument(..., help="id of a failed job"),
    actor: str = ACTOR,
    password_stdin: bool = PASSWORD_STDIN,
) -> None:
    """Queue a failed job again; `hat serve` resumes it at the stage it reached."""
    from db.job_retries import retry_job

    sessions = open_store()
    user = authenticated_actor(sessions, actor=actor, password_stdin=password_stdin)
    if user.role not in RETRY_ROLES:
        raise HatError(f"{user.name} is {user.role}: retrying a job needs operator or admin")
    job = in_transaction(sessions, lambda s: retry_job(s, job_id=job_id, actor=user.name))
    typer.echo(f"job {job.id} queued again (attempts so far {job.attempts}, stage "
               f"{job.stage or '-'}): `hat serve` resumes it")
