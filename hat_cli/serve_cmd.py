"""`hat serve`: run the retrain service until Ctrl-C / SIGTERM (docs/flows.md).

Without `HAT_PREFECT_API_URL`/`PREFECT_API_URL` it starts a local `prefect server` (state under
`$HAT_HOME/prefect`) and stops it on exit. `--reconcile-once` submits the pending outbox
events and resumes the due interrupted jobs once, and exits (for tests and cron jobs).
Beside the deployments it runs the A/B gateway (`hat gateway`, port `--gateway-port`, 8080) on
the embedded default: the slot's champion and challenger in this process, every request an
exposure; `--no-gateway` leaves serving to the production proxy. `--gateway-host 0.0.0.0`
in a container whose port is published; `--gateway-backend-url URL` (once per arm's vLLM)
forwards the arms instead of loading them here; `--gateway-workers N` runs N gateway
processes on the port (default 2 when forwarding, 1 when the models load here).
"""

from __future__ import annotations

import os
import signal
from contextlib import nullcontext
from datetime import timedelta
from pathlib import Path

import typer

from hat_cli.db_cmd import open_store
from hat_cli.errors import exits_on_error
from hat_cli.retrain_cmd import prepare_prefect_env
from hat_core.settings import load_settings


@exits_on_error
def serve(
    config: Path = typer.Option(None, "--config", help="retrain config YAML"),
    reconcile_once: bool = typer.Option(False, "--reconcile-once",
                                        help="submit pending outbox events and resume "
                                             "due interrupted jobs, once, and exit"),
    interval: float = typer.Option(5.0, "--reconcile-every", min=0.5,
                                   help="seconds between reconciler passes"),
    gateway: bool = typer.Option(True, "--gateway/--no-gateway",
                                 help="run the A/B gateway beside the deployments"),
    gateway_port: int = typer.Option(8080, "--gateway-port"),
    gateway_host: str = typer.Option("127.0.0.1", "--gateway-host",
                                     help="0.0.0.0 in a container whose port is published"),
    experiment: str = typer.Option(None, "--experiment",
                                   help="the gateway's experiment (default: the newest)"),
    gateway_backend_url: list[str] = typer.Option(
        None, "--gateway-backend-url", help="the arms' OpenAI-compatible server (vLLM), "
                                            "repeat for one per arm; default: models loaded "
                                            "in this process"),
    gateway_workers: int = typer.Option(None, "--gateway-workers", min=1,
                                        help="gateway processes on the port (default: 2 "
                                             "with --gateway-backend-url, else 1)"),
) -> None:
    """Serve the retrain deployment (harness-change event + weekly cron) and the reconciler."""
    settings = load_settings()
    prepare_prefect_env(settings)
    os.environ.setdefault("PREFECT_RUNNER_POLL_FREQUENCY", "2")  # start runs within ~2 s
    sessions = open_store()
    from flows.config import load_retrain_config
    from flows.prefect_server import prefect_api

    retrain_config = load_retrain_config(config)
    server = nullcontext(os.environ.get("PREFECT_API_URL")) if reconcile_once else \
        prefect_api(Path(settings.home).resolve() / "prefect")
    with server as api:  # before anything imports prefect: it reads PREFECT_API_URL once
        from flows.interruption_spool import spool_dir
        from flows.reconciler import ReconcilerLoop, resume_once
        from flows.reconciler import reconcile_once as reconcile
        from flows.serve import serve_forever

        lease = timedelta(seconds=retrain_config.job_lease_s)

        def say(line: str) -> None:
            typer.echo(line, err=True)

        def resume() -> None:
            for job_id, run in resume_once(sessions, policy=retrain_config.resume,
                                           lease=lease, spool=spool_dir(settings.home),
                                           on_error=say).items():
                typer.echo(f"resuming job {job_id}: flow run {run}", err=True)
        if reconcile_once:
            started = reconcile(sessions)
            typer.echo(f"submitted {len(started)} pending event(s)")
            resume()  # and the interrupted jobs that are due, as every pass of the loop
            return
        typer.echo(f"prefect API {api}", err=True)
        loop = ReconcilerLoop(sessions, interval, resume=resume,
                              on_error=lambda e: typer.echo(f"reconciler: {e}", err=True))
        loop.start()
        try:
            with _gateway(gateway, sessions, settings, experiment,
                          (gateway_host, gateway_port), gateway_backend_url, gateway_workers):
                serve_forever(str(config) if config else None, retrain_config.train_slot)
        finally:
            quiet_signals()  # a second Ctrl-C / SIGTERM must not break the clean-up
            loop.stop()
            loop.join(timeout=10)
    typer.echo("stopped", err=True)


def _gateway(enabled: bool, sessions, settings, experiment: str | None,
             address: tuple[str, int], backend_url: list[str] | None, workers: int | None):
    if not enabled:
        return nullcontext()
    from hat_cli.gateway_cmd import embedded_gateway

    return embedded_gateway(sessions, settings, experiment_ref=experiment, host=address[0],
                            port=address[1], say=lambda line: typer.echo(line, err=True),
                            backend_url=backend_url, workers=workers)


def quiet_signals() -> None:
    """Ignore SIGINT and SIGTERM from now on (shutdown is under way)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
