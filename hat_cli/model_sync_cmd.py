"""`hat model-sync`: keep the arms' model folders on the serving volume in step with the slot.

    hat model-sync [--root DIR] [--every 5] [--once]

Reads the A/B slot from the store (the champion serves the control arm, the challenger the
treatment arm, as the gateway reads it), downloads each arm's version from the MLflow
registry to `ROOT/NAME/VERSION/` and points `ROOT/ARM.json` at it
(`hat_core.serving.model_sync`); each arm's vLLM (`python -m hat_core.serving.arm_server`)
restarts on the new folder. ROOT defaults to `$HAT_HOME/serving-models`. Runs until
Ctrl-C / SIGTERM; `--once` syncs once and exits (exit 2 when the store or registry fails).
"""

from __future__ import annotations

import signal
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error


def store_sync(sessions, settings, root: Path, *, slot: str = "ab", say=typer.echo):
    """A `ModelSync` reading `slot` from the store and downloading from the settings'
    registry."""
    from db.serving_slot import slot_targets
    from hat_core.release.registry import ModelRegistry
    from hat_core.serving.model_sync import ModelSync

    registry = ModelRegistry(settings.resolved_mlflow_uri())

    def read():
        with sessions() as s:
            return slot_targets(s, slot=slot)

    return ModelSync(root, read=read, say=say,
                     download=lambda t, dst: registry.download(t.registry_name, t.version,
                                                               dst),
                     on_error=lambda exc: say(f"model sync: keeping the arms: {exc}"))


@exits_on_error
def model_sync(
    root: Path = typer.Option(None, "--root", help="the serving volume (default: "
                                                   "$HAT_HOME/serving-models)"),
    every: float = typer.Option(5.0, "--every", min=0.5, help="seconds between reads"),
    once: bool = typer.Option(False, "--once", help="sync once and exit"),
) -> None:
    """Download the slot's versions to the serving volume and point each arm at its own."""
    from hat_cli.db_cmd import open_store
    from hat_core.settings import load_settings

    settings = load_settings()
    root = root or Path(settings.home).resolve() / "serving-models"
    sync = store_sync(open_store(), settings, root)
    if once:
        changed = sync.sync_once()
        typer.echo(f"{len(changed)} arm(s) changed: {sorted(changed)}")
        return
    signal.signal(signal.SIGTERM, lambda *_: sync.stop())
    typer.echo(f"model sync into {root} every {every:g} s (Ctrl-C stops it)")
    try:
        sync.run(every_s=every)
    except KeyboardInterrupt:
        sync.stop()
