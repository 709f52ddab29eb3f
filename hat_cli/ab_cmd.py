"""`hat ab analyze FILE`: lift, confidence intervals and p-values of an online A/B test.

`hat ab simulate --out FILE` writes seeded simulated data with a known true lift (the
example `examples/ab/sample.csv` is `hat ab simulate --out examples/ab/sample.csv`).
A file that cannot be analysed exits 2 with every problem listed (column, line).
`--save` also stores the analysis in the SQL store (the file's name and sha256, the settings
and the result; not the rows), where the console's A/B page lists it. It is saved by a proven
actor (`hat_cli.login_cmd.acting_user`: the saved `hat login`, or the password of `--actor`,
default the OS user, at a prompt or with `--password-stdin`) with the operator role or above
(`evidence.save`), checked before the analysis runs.

`hat ab analyze --experiment ID` reads the same table from the store instead of a file: the
gateway's exposures (each user's arm; the SRM check on the assignment log, against the
experiment's split) and the outcome events (`hat ab outcomes FILE --experiment ID`, or
`POST /v1/outcomes` on the gateway). `hat ab experiment create NAME --split 0.2` starts one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import typer
from rich.console import Console

from hat_cli.errors import exits_on_error
from hat_core.errors import ConfigError, Problem
from hat_core.evidence.options import BOOTSTRAP_METHODS, CORRECTIONS

app = typer.Typer(help="Online A/B evidence: lifts with CIs, p-values, SRM, CUPED.",
                  no_args_is_help=True)


def parse_metrics(text: str | None) -> tuple[str, ...] | None:
    """`"gmv,detail_page_views"` -> ("gmv", "detail_page_views"); None -> every metric."""
    if text is None:
        return None
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    if not names:
        raise ConfigError(f"bad --metrics {text!r}",
                          [Problem("metrics", "comma-separated column names, e.g. gmv,views")])
    return names


@app.command("analyze")
@exits_on_error
def analyze_cmd(
    file: Path = typer.Argument(None, help="CSV or Parquet: user_id, arm, day, metrics"),
    experiment: str = typer.Option(None, "--experiment", help="read exposures and outcomes "
                                                              "of this experiment (name or "
                                                              "id) from the store instead"),
    metrics: str | None = typer.Option(None, "--metrics", help="e.g. gmv,detail_page_views "
                                                               "(default: every metric column)"),
    control: str = typer.Option("control", "--control", help="the control arm's label"),
    treatment: str = typer.Option("treatment", "--treatment", help="the treatment arm's label"),
    expected_split: float = typer.Option(None, "--expected-split",
                                         help="expected share of users in control (0.8 = "
                                              "80/20; default 0.5, or the experiment's)"),
    alpha: float = typer.Option(0.05, "--alpha", help="1 - confidence level"),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="resamples (0: off)"),
    bootstrap_method: str = typer.Option("percentile", "--bootstrap-method",
                                         help=f"one of: {', '.join(BOOTSTRAP_METHODS)}"),
    correction: str = typer.Option("holm", "--correction",
                                   help=f"one of: {', '.join(CORRECTIONS)}"),
    no_cuped: bool = typer.Option(False, "--no-cuped", help="ignore <metric>_pre covariates"),
    seed: int = typer.Option(0, "--seed", help="bootstrap seed"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
    markdown: bool = typer.Option(False, "--markdown", help="print a markdown table"),
    save: bool = typer.Option(False, "--save", help="also store the analysis in the SQL store"),
    name: str | None = typer.Option(None, "--name", help="the saved analysis' name "
                                                         "(default: the file name)"),
    actor: str | None = typer.Option(None, "--actor", help="who saves it (default: the saved "
                                     "`hat login`, else the OS user); proven by a password"),
    password_stdin: bool = typer.Option(False, "--password-stdin",
                                        help="with --save: the actor's password from stdin"),
) -> None:
    """Analyse an A/B file: per-metric lift, Welch + bootstrap CIs, adjusted p-values."""
    from hat_core.evidence.ab import AbConfig, analyze
    from hat_core.evidence.ab_render import ab_markdown, ab_table
    from hat_core.evidence.loader import load_ab

    if (file is None) == (experiment is None):
        raise ConfigError("give a FILE or --experiment ID (one of them)")
    store = _open_store() if save or experiment else None  # refuse an unmigrated store first
    saver = _saver(store, actor, password_stdin) if save and file is not None else None
    config = AbConfig(expected_split=0.5 if expected_split is None else expected_split,
                      alpha=alpha, bootstrap=bootstrap, bootstrap_method=bootstrap_method,
                      correction=correction, cuped=not no_cuped, seed=seed)
    if experiment is not None:
        from dataclasses import replace

        from db.experiment_data import experiment_data

        with store() as s:
            found = experiment_data(s, ref=experiment, metrics=parse_metrics(metrics))
        if found.note:
            typer.echo(found.note, err=True)
        data = found.data
        if expected_split is None:  # the experiment's split, unless one is given
            config = replace(config, expected_split=found.control_share)
    else:
        data = load_ab(file, control=control, treatment=treatment,
                       metrics=parse_metrics(metrics))
    report = analyze(data, config)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, allow_nan=False))
    elif markdown:
        typer.echo(ab_markdown(report))
    else:
        console = Console()
        Console(width=max(console.width, 200) if not console.is_terminal else None,
                ).print(ab_table(report))
    if report.srm.mismatch:
        typer.echo("warning: sample ratio mismatch; the lifts above are not trustworthy",
                   err=True)
    if save and file is None:
        typer.echo("--save keeps analyses of files; an experiment's is re-read from the store",
                   err=True)
    elif save:
        saved = save_analysis(store, file, data, report.to_dict(), name=name or file.name,
                              actor=saver)
        typer.echo(f"saved as A/B analysis {saved.id} ({saved.name})", err=True)


def _open_store():
    from hat_cli.db_cmd import open_store

    return open_store()


def _saver(store, actor: str | None, password_stdin: bool) -> str:
    """The proven user who saves the analysis (operator or above)."""
    from hat_cli.login_cmd import acting_user

    return acting_user(store, actor=actor, password_stdin=password_stdin,
                       action="evidence.save").name


def save_analysis(store, file: Path, data, result: dict, *, name: str, actor: str):
    """Store `result` (an `AbReport.to_dict()`) of `file` through the session factory `store`,
    saved by `actor` (a user already proven by the caller)."""
    from db.ab_repo import save_ab_analysis
    from db.engine import in_transaction
    from hat_core.evidence.ab_data import USER

    sha = hashlib.sha256(Path(file).read_bytes()).hexdigest()
    return in_transaction(store, lambda s: save_ab_analysis(
        s, name=name, source_name=Path(file).name, source_sha256=sha, result=result,
        n_rows=len(data.frame), n_users=int(data.frame[USER].nunique()),
        actor=actor))


@app.command("simulate")
@exits_on_error
def simulate_cmd(
    out: Path = typer.Option(..., "--out", help="CSV or Parquet file to write"),
    seed: int = typer.Option(0, "--seed"),
    n_control: int = typer.Option(480, "--n-control", min=2),
    n_treatment: int = typer.Option(120, "--n-treatment", min=2),
    true_lift: float = typer.Option(0.15, "--true-lift", help="relative lift of every metric"),
    days: int = typer.Option(5, "--days", min=1),
    covariate_correlation: float = typer.Option(0.7, "--covariate-correlation", min=0, max=1),
) -> None:
    """Write simulated per-user, per-day A/B data with a known true lift."""
    from hat_core.evidence.loader import write_table
    from hat_core.evidence.simulate import simulate_ab

    frame = simulate_ab(seed, n_control=n_control, n_treatment=n_treatment,
                        true_lift=true_lift, days=days,
                        covariate_correlation=covariate_correlation)
    write_table(frame, out)
    typer.echo(f"wrote {len(frame)} rows ({n_control} + {n_treatment} users, {days} days) "
               f"to {out}")
