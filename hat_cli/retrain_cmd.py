"""`hat retrain --harness-version N`: the whole retrain flow, in this process.

The same flow the `retrain/harness-change` deployment runs (docs/flows.md), for operators and
the demo. Prefect runs it against `HAT_PREFECT_API_URL`/`PREFECT_API_URL`, else a local
`prefect server` under `$HAT_HOME/prefect` that ends with this command, on SIGTERM and SIGKILL
too (`flows/prefect_server.py`, `hat_core.children`); task results (for resuming after a
crash) go under `$HAT_HOME/prefect-results`.
The config and the gates file it names are read and validated first: a bad one exits 2 with
its report before Prefect is imported or a server started.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_cli.terminal import long_command
from hat_core.settings import Settings, load_settings


def prefect_home(settings: Settings) -> Path:
    """Prefect's own state (its temporary server's database, profiles): `<HAT_HOME>/prefect`."""
    return Path(settings.home).resolve() / "prefect"


def prepare_prefect_env(settings: Settings) -> None:
    """Point Prefect at the configured API and keep its home and task results under the HAT
    home (call before importing `flows`; explicit Prefect variables win)."""
    if settings.prefect_api_url:
        os.environ.setdefault("PREFECT_API_URL", settings.prefect_api_url)
    os.environ.setdefault("PREFECT_HOME", str(prefect_home(settings)))
    results = Path(settings.home).resolve() / "prefect-results"
    os.environ.setdefault("PREFECT_RESULTS_LOCAL_STORAGE_PATH", str(results))
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # Prefect waits 20 s for its temporary server; a loaded 2-core machine needs longer
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")


# measured on the 2-core development machines (docs/base-model.md, docs/operations.md)
BUILD_TIME = {"test": "under a minute", "toy-test": "under a minute",
              "tiny": "15-23 minutes on 2 CPU cores (17.5 min measured)"}
DEMO_CONFIG = "examples/configs/retrain_demo.yaml"


def what_it_builds(path: Path | None, config, home: Path) -> str:
    """The heads-up `hat retrain` prints first: the config, the base model it uses or builds
    (and how long a build takes), and the demo config for a quick run."""
    from flows.config import DEFAULT_CONFIG
    from hat_core.basemodel import get_size
    from hat_core.basemodel.build import cache_entry, is_built

    lines = [f"retrain config: {path or DEFAULT_CONFIG}" + ("" if path else " (the default)")]
    if config.base_model:
        lines.append(f"base model: {config.base_model}")
    else:
        spec, seed = get_size(config.base_size), config.base_seed
        entry = cache_entry(load_settings().resolved_cache_dir() / "base-models", spec, seed)
        built = any(is_built(p, spec, seed) for p in
                    (home / "models" / f"base-{spec.name}-seed{seed}", entry))
        lines.append(f"base model: the embedded `{spec.name}` (seed {seed}), " + (
            "already built" if built else
            f"built first: {BUILD_TIME.get(spec.name, 'see docs/base-model.md')}, once "
            f"(then cached in {entry.parent}); progress lines follow"))
    if path is None:
        lines.append(f"for a quick run: --config {DEMO_CONFIG} (the `test` base, a few steps "
                     "per stage, a few minutes)")
    return "\n".join(lines)


def prefect_ui_hint(settings: Settings) -> str:
    """Where to see the flow runs: the running server's UI, else how to start one on the
    temporary server's database."""
    api = os.environ.get("PREFECT_API_URL") or settings.prefect_api_url
    if api:
        return f"Prefect UI: {api.removesuffix('/').removesuffix('/api')}"
    home = os.environ.get("PREFECT_HOME") or prefect_home(settings)
    return (f"Prefect UI: `PREFECT_HOME={home} prefect server start`, then "
            "http://127.0.0.1:4200 (the flow runs of this home)")


@exits_on_error
def retrain(
    harness_version: int = typer.Option(..., "--harness-version", help="version number N"),
    line: str = typer.Option(None, "--line", help="harness line (default: the only one)"),
    config: Path = typer.Option(None, "--config",
                                help="retrain config YAML (default: retrain_tiny.yaml)"),
    trigger: str = typer.Option("manual", "--trigger",
                                help="trigger kind; one job per (version, trigger)"),
) -> None:
    """Run the retrain pipeline for one harness version and print its verdict as JSON."""
    from flows.config import load_retrain_config  # no Prefect import: the env is not set yet
    from flows.prefect_server import prefect_api

    loaded = load_retrain_config(config)  # a bad config or gates file exits 2 before Prefect
    settings = load_settings()
    typer.echo(what_it_builds(config, loaded, Path(settings.home).resolve()), err=True)
    prepare_prefect_env(settings)
    with long_command("retrain", stderr=True) as term:  # stdout: the verdict as JSON
        with prefect_api(Path(settings.home).resolve() / "prefect"), \
                term.stage(f"retrain flow for version {harness_version}") as shown:
            from flows.retrain import retrain as retrain_flow

            result = retrain_flow(harness_version=harness_version, line=line, trigger=trigger,
                                  config_path=str(config) if config else None)
            shown.done(outcome=result.get("outcome"), state=result.get("state"))
        term.hint(f"MLflow UI: `mlflow ui --backend-store-uri "
                  f"{settings.resolved_mlflow_uri()}`")
        term.hint(prefect_ui_hint(settings))
    typer.echo(json.dumps(result, ensure_ascii=False, indent=2, default=str))
