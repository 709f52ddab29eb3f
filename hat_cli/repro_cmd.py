"""`hat repro`: the reproduction table (Base, Fixed SFT, HSA-SFT, HSA-SFT + OPD, HAT), one budget.

    hat repro --quick                                  # smoke run, minutes
    hat repro --config examples/configs/repro_full.yaml --seeds 0,1,2 --out docs/results
    hat repro --seeds 1 --threads 1 --work /tmp/r1 &  hat repro --seeds 2 --threads 1 ...
    hat repro --config examples/configs/repro_full.yaml --set sft.max_steps=1200 --seeds 0
    hat repro --merge /tmp/r1/results/results.json /tmp/r2/results/results.json --out DIR \
        [--tracking-uri URI]          # also log the merged aggregates as an MLflow run

The multi-seed aggregates (pooled rates, paired tests) go to MLflow as a `repro aggregate`
run (`hat_core.repro.tracking`): always after a run, after a merge when a URI is given.

Same engine as `benchmarks/repro_table.py` (`hat_core.repro.run`); see
docs/results.md for what the table shows and what it costs.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_cli.terminal import long_command
from hat_core.config_file import parse_overrides
from hat_core.errors import ConfigError
from hat_core.repro.config import load_repro_config
from hat_core.repro.report import markdown_table, merge_results, write_outputs
from hat_core.repro.run import run_repro
from hat_core.repro.tracking import log_aggregates
from hat_core.settings import load_settings

CONFIGS = Path("examples") / "configs"


@exits_on_error
def repro(
    config: Path = typer.Option(None, "--config", help="a repro YAML (default repro_full.yaml)"),
    quick: bool = typer.Option(False, "--quick", help="the smoke-run config (repro_quick.yaml)"),
    seeds: str = typer.Option(None, "--seeds", help="comma-separated seeds, e.g. 0,1,2"),
    threads: int = typer.Option(None, "--threads", min=1,
                                help="torch CPU threads (default: the config's)"),
    merge: list[Path] = typer.Option(None, "--merge", help="a results.json of a finished run "
                                     "(repeat): one table over their seeds, nothing trained"),
    out: Path = typer.Option(None, "--out", help="table, plots, results.json "
                                                 "(default <work>/results)"),
    work: Path = typer.Option(Path("runs/repro"), "--work", help="models, data, MLflow store"),
    cache_dir: Path = typer.Option(None, "--cache-dir",
                                   help="cache root (default $HAT_CACHE_DIR, else HAT_HOME/cache)"),
    tracking_uri: str = typer.Option(None, "--tracking-uri", envvar="HAT_MLFLOW_TRACKING_URI",
                                     help="MLflow (default a SQLite store in --work; "
                                          "with --merge, none unless given)"),
    sets: list[str] = typer.Option([], "--set", help="override a config key, dotted: "
                                   "sft.max_steps=1200 (repeatable)"),
) -> None:
    """Train and evaluate the five arms over seeds; write the table and plots."""
    if merge:
        merged = merge_results(list(merge))
        _write(merged, out or work / "results")
        if tracking_uri:
            _log(merged, tracking_uri, work / "mlartifacts")
        return
    path = config or CONFIGS / ("repro_quick.yaml" if quick else "repro_full.yaml")
    overrides = parse_overrides(sets)  # YAML scalars: 1200 -> int
    if seeds:
        overrides["seeds"] = _seeds(seeds)
    if threads:
        overrides["threads"] = threads
    settings = load_repro_config(path, overrides)  # before the work folder or MLflow
    work.mkdir(parents=True, exist_ok=True)
    uri = tracking_uri or f"sqlite:///{work.resolve()}/mlflow.db"
    root = cache_dir or load_settings().resolved_cache_dir()
    with long_command("repro") as term:
        def log(line: str) -> None:
            term.print(f"[{time.strftime('%H:%M:%S')}] {line}", markup=False, highlight=False)

        results = run_repro(settings, work, cache_dir=root / "base-models", tracking_uri=uri,
                            log=log)
        results["mlflow_uri"] = uri
        _write(results, out or work / "results",
               lambda text: term.print(text, markup=False, highlight=False))
        _log(results, uri, work / "mlartifacts", lambda text: term.print(text, markup=False))
        term.hint(f"MLflow UI: `mlflow ui --backend-store-uri {uri}`")


def _seeds(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",")]
    except ValueError:
        raise ConfigError(f"--seeds {text!r}: expected comma-separated integers, "
                          "e.g. 0,1,2") from None


def _log(results: dict, uri: str, artifacts: Path, say=typer.echo) -> None:
    run_id = log_aggregates(results, uri, artifacts=artifacts)
    say(f"aggregates: MLflow run {run_id} (repro aggregate) at {uri}")


def _write(results: dict, out: Path, say=typer.echo) -> None:
    files = write_outputs(results, out)
    say(markdown_table(results))
    for name, file in files.items():
        say(f"{name}: {file}")
