"""`hat train sft|opd|rl --config FILE [--base PATH] [--resume]`: one HAT stage, model dir in,
model dir out.

Values: the stage's defaults < the YAML file < these options (`--set key=value` for any key,
dotted for nested ones: `--set lora.enabled=true`). The MLflow URI comes from
`--tracking-uri`, the config's `tracking.uri`, or `HAT_MLFLOW_TRACKING_URI`; without one
nothing is logged. A bad config exits 2 listing every problem and the valid options.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_cli.terminal import Stage, Terminal, long_command
from hat_core.config_file import apply_overrides, read_config
from hat_core.errors import ConfigError, Problem
from hat_core.settings import Settings, load_settings

app = typer.Typer(help="Run one HAT training stage (sft, opd, rl).", no_args_is_help=True)


def _sets(values: list[str]) -> dict:
    out = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError("bad --set", [Problem(item, "expected key=value")])
        out[key.strip()] = value.strip()
    return out


def _overrides(base, output_dir, max_steps, tracking_uri, sets) -> dict:
    """`--set` pairs, then the named options that were given."""
    given = {"base": base, "output_dir": output_dir, "max_steps": max_steps,
             "tracking.uri": tracking_uri}
    return _sets(sets) | {k: str(v) if isinstance(v, Path) else v
                          for k, v in given.items() if v is not None}


def _load(stage: str, config: Path, overrides: dict):
    """The validated config. The file is read first, so a broken one exits 2 before the
    training libraries load; the settings (`HAT_MLFLOW_TRACKING_URI`, `HAT_BASE_MODEL`) fill
    `tracking.uri` and `base` when neither the file nor the options set them."""
    data = read_config(config, overrides, what=f"{stage} stage config")
    from hat_core.training.config import build_stage_config

    data = apply_overrides(data, _from_settings(data, load_settings()))
    return build_stage_config(stage, data, source=str(config))


def _from_settings(data: Mapping, settings: Settings) -> dict:
    """`tracking.uri` and `base` from the settings, where the config leaves them empty."""
    extra = {}
    tracking = data.get("tracking")
    if settings.mlflow_tracking_uri and (tracking is None or isinstance(tracking, Mapping)) \
            and not (tracking or {}).get("uri"):
        extra["tracking.uri"] = settings.mlflow_tracking_uri
    if settings.base_model and not data.get("base"):
        extra["base"] = str(settings.base_model)
    return extra


LABELS = {"sft": "HSA-SFT", "opd": "General OPD", "rl": "HSA-RL"}


def _progress(term: Terminal, shown: Stage):
    """The stage's events on its progress display: step, loss, mean rewards."""
    def show(event: str, info: dict) -> None:
        if event == "step" and "loss" in info:
            rewards = {k.split("/")[1]: v for k, v in info.items()
                       if k.startswith("rewards/") and k.endswith("/mean")}
            shown.update(info["step"], info["max_steps"], loss=info["loss"], **rewards)
        elif event == "probe":
            term.print("probe: running the regression probe")

    return show


def _run(stage: str, config: Path, base, output_dir, max_steps, resume, tracking_uri, sets,
         json_out: bool) -> None:
    cfg = _load(stage, config, _overrides(base, output_dir, max_steps, tracking_uri, sets))
    with long_command(f"train-{stage}", stderr=json_out) as term:
        from hat_core.training import run_stage_named

        with term.stage(LABELS[stage], total=cfg.max_steps) as shown:
            result = run_stage_named(stage, cfg, resume=resume, progress=_progress(term, shown))
            shown.done(steps=result.steps, train_loss=result.metrics.get("train_loss"))
        if not json_out:
            _report(term, stage, result)
        if result.run_id:
            term.hint(f"MLflow UI: `mlflow ui --backend-store-uri {cfg.tracking.uri}`")
    if json_out:
        typer.echo(json.dumps(result.to_dict() | {"history": len(result.history)},
                              ensure_ascii=False, default=str))


def _report(term: Terminal, stage: str, result) -> None:
    term.print(f"{stage}: {result.steps} steps -> {result.output_dir}"
               + (f" (resumed from {result.resumed_from})" if result.resumed_from else ""),
               highlight=False)
    term.print(f"  train_loss {result.metrics.get('train_loss', float('nan')):.4f}, "
               f"{result.metrics.get('wall_seconds')} s", highlight=False)
    if result.probe:
        p = result.probe
        term.print(f"  probe: T1 pass {p['t1_pass_rate']:.0%} ({p['t1_episodes']} episodes), "
                   f"IFE-P {p['ifeval_prompt_strict']:.0%} ({p['ifeval_prompts']} prompts)",
                   highlight=False)
    if "flat_groups" in result.extra:
        e = result.extra
        term.print(f"  flat groups (no signal): {e['flat_groups']}/{e['groups']} "
                   f"({e['flat_group_share']:.0%})", highlight=False)
    if result.run_id:
        term.print(f"  mlflow run {result.run_id}", highlight=False)


CONFIG = typer.Option(..., "--config", "-c", exists=False, help="stage YAML config")
BASE = typer.Option(None, "--base", help="input model directory (overrides `base:`)")
OUT = typer.Option(None, "--output-dir", "-o", help="output model directory")
STEPS = typer.Option(None, "--max-steps", help="override max_steps")
RESUME = typer.Option(False, "--resume", help="continue from the last checkpoint")
TRACK = typer.Option(None, "--tracking-uri", help="MLflow tracking URI")
SETS = typer.Option([], "--set", help="key=value override (dotted keys); repeatable")
JSON = typer.Option(False, "--json", help="print the stage result as JSON")


def _command(stage: str, doc: str):
    @exits_on_error
    def command(config: Path = CONFIG, base: Path | None = BASE, output_dir: Path | None = OUT,
                max_steps: int | None = STEPS, resume: bool = RESUME,
                tracking_uri: str | None = TRACK, set_: list[str] = SETS,
                json_out: bool = JSON) -> None:
        _run(stage, config, base, output_dir, max_steps, resume, tracking_uri, set_, json_out)

    command.__doc__ = doc
    command.__name__ = stage
    return command


app.command("sft")(_command("sft", "HSA-SFT: SFTTrainer on teacher trajectories."))
app.command("opd")(_command("opd", "General OPD: distil from the pre-SFT base on general "
                                   "prompts."))
app.command("rl")(_command("rl", "HSA-RL: GRPO/GDPO in the simulator under HSA variants."))
