"""`hat ab experiment create|list` and `hat ab outcomes FILE --experiment ID`: the store side
of online A/B tests (the gateway writes the exposures; docs/operations.md, "The A/B gateway").

    hat ab experiment create wk49 --split 0.2      # 20% of users see the challenger
    hat ab outcomes day1.csv --experiment wk49     # user_id, day, metric columns (arm ignored)
    hat ab analyze --experiment wk49               # exposures + outcomes from the store
"""

from __future__ import annotations

from pathlib import Path

import typer

from hat_cli.errors import exits_on_error

app = typer.Typer(help="A/B experiments of the serving slot.", no_args_is_help=True)


@app.command("create")
@exits_on_error
def create_cmd(
    name: str = typer.Argument(..., help="a name with a letter"),
    split: float = typer.Option(0.5, "--split", help="share of users in the treatment arm "
                                                     "(the challenger)"),
    slot: str = typer.Option("ab", "--slot"),
    actor: str = typer.Option(None, "--actor", help="who starts it (default: the saved "
                                                    "`hat login`); proven by a password"),
    password_stdin: bool = typer.Option(False, "--password-stdin",
                                        help="the actor's password from stdin"),
) -> None:
    """Start an experiment: a new salt, so users are assigned afresh. The actor is proven
    (`hat login`, or the password of `--actor`) and needs the operator role."""
    from db.engine import in_transaction
    from db.experiments_repo import create_experiment
    from hat_cli.db_cmd import open_store
    from hat_cli.login_cmd import acting_user
    from hat_core.serving.assignment import Experiment

    Experiment(0, name, "x", split)  # a bad split is refused before anyone is asked to log in
    sessions = open_store()
    user = acting_user(sessions, actor=actor, password_stdin=password_stdin,
                       action="release.experiment")
    exp = in_transaction(sessions, lambda s: create_experiment(
        s, name=name, treatment_share=split, actor=user.name, slot=slot))
    typer.echo(f"experiment {exp.id} {exp.name}: slot {exp.slot}, treatment share "
               f"{exp.treatment_share}")


@app.command("list")
@exits_on_error
def list_cmd() -> None:
    """Experiments, newest first, with users and requests per arm."""
    from db.experiments_repo import list_experiments
    from db.exposures_repo import arm_counts
    from hat_cli.db_cmd import open_store

    with open_store()() as s:
        for e in list_experiments(s):
            counts = ", ".join(f"{c.arm} {c.users} users / {c.requests} requests"
                               for c in arm_counts(s, experiment_id=e.id)) or "no exposures"
            typer.echo(f"{e.id}\t{e.name}\tslot {e.slot}\ttreatment {e.treatment_share}\t"
                       f"{counts}")


@exits_on_error
def outcomes_cmd(
    file: Path = typer.Argument(..., help="CSV or Parquet: user_id, day, metric columns"),
    experiment: str = typer.Option(..., "--experiment", help="name or id"),
    metrics: str = typer.Option(None, "--metrics", help="only these columns (default: all "
                                                        "but user_id, arm, day)"),
) -> None:
    """Store outcome events (one per metric cell) for an experiment; all or nothing."""
    from db.engine import in_transaction
    from db.experiments_repo import find_experiment
    from db.outcomes_repo import add_outcomes
    from hat_cli.ab_cmd import parse_metrics
    from hat_cli.db_cmd import open_store
    from hat_core.evidence.ab_events import events_from_frame
    from hat_core.evidence.loader import read_table

    sessions = open_store()
    with sessions() as s:
        exp = find_experiment(s, ref=experiment)
    raw, _ = read_table(file)
    events = events_from_frame(raw, parse_metrics(metrics))
    stored = in_transaction(sessions, lambda s: add_outcomes(s, experiment_id=exp.id,
                                                             events=events))
    typer.echo(f"stored {stored} outcome events for experiment {exp.name}")
