"""The `hat` command line: the composition root that may import every package.

Run `hat --help`. Each command group lives in its own module; errors HAT Ops raises on
purpose (`HatError`) become a readable report on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import typer

from hat_cli import (
    ab_cmd,
    audit_cmd,
    augment_cmd,
    base_cmd,
    data_cmd,
    db_cmd,
    demo_cmd,
    eval_cmd,
    experiment_cmd,
    gateway_cmd,
    harness_cmd,
    job_cmd,
    latency_cmd,
    login_cmd,
    model_sync_cmd,
    pairwise_cmd,
    release_cmd,
    repro_cmd,
    retrain_cmd,
    serve_cmd,
    sim_cmd,
    store_cmd,  # noqa: F401  (adds submit, list, show to `hat harness`)
    train_cmd,
    ui_cmd,
    user_cmd,
)
from hat_core.children import raise_on_sigterm

app = typer.Typer(
    name="hat",
    help="HAT Ops: harness-aware training as a continuous-retraining service.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _every_command() -> None:
    """SIGTERM stops any command as Ctrl-C does: its `finally` blocks stop its children."""
    raise_on_sigterm()


app.add_typer(harness_cmd.app, name="harness")
app.add_typer(db_cmd.app, name="db")
app.add_typer(user_cmd.app, name="user")
app.add_typer(sim_cmd.app, name="sim")
app.add_typer(base_cmd.app, name="base")
app.command("augment")(augment_cmd.augment)
app.add_typer(eval_cmd.app, name="eval")
app.command("latency")(latency_cmd.latency)
app.add_typer(ab_cmd.app, name="ab")
ab_cmd.app.add_typer(experiment_cmd.app, name="experiment")
ab_cmd.app.command("outcomes")(experiment_cmd.outcomes_cmd)
app.add_typer(audit_cmd.app, name="audit")
app.add_typer(pairwise_cmd.app, name="pairwise")
app.add_typer(data_cmd.app, name="data")
app.command("retrain")(retrain_cmd.retrain)
app.add_typer(job_cmd.app, name="job")
app.command("serve")(serve_cmd.serve)
app.command("gateway")(gateway_cmd.gateway)
app.command("model-sync")(model_sync_cmd.model_sync)
app.command("login")(login_cmd.login)
app.command("logout")(login_cmd.logout)
app.command("promote")(release_cmd.promote)
app.command("rollback")(release_cmd.rollback)
app.add_typer(train_cmd.app, name="train")
app.command("ui")(ui_cmd.ui)
app.command("demo")(demo_cmd.demo)
app.command("repro")(repro_cmd.repro)
