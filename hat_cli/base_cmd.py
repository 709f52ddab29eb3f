"""`hat base ...`: build the base model from a seed, probe a model directory, grow it deeper."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_cli.terminal import Stage, Terminal, long_command
from hat_core.basemodel.sizes import SIZES
from hat_core.settings import load_settings

app = typer.Typer(help="Build and probe the base model.", no_args_is_help=True)


class BuildDisplay:
    """Turns build events into a pre-training stage (steps, loss) and status lines."""

    def __init__(self, term: Terminal):
        self.term = term
        self.training: Stage | None = None

    def __call__(self, stage: str, info: dict) -> None:
        if stage == "step":
            if self.training is None:
                self.training = self.term.begin("pre-training", total=info["total"])
            self.training.update(info["step"], info["total"], loss=info["loss"])
            return
        if self.training is not None:
            self.training.end()
            self.training = None
        if stage == "reused":
            self.term.print(f"reused cached base model at {info['path']}", highlight=False)
        elif stage == "swept":
            self.term.print(f"removed a killed build's staging folder {info['path']}",
                            highlight=False)
        else:
            details = ", ".join(f"{k} {v}" for k, v in info.items())
            self.term.print(f"{stage}: {details}", highlight=False)


def _summary(manifest: dict, path: Path) -> str:
    p, t = manifest["probe"], manifest["training"]
    return (f"base model '{manifest['size']}' seed {manifest['seed']} at {path}\n"
            f"  parameters {manifest['parameters']:,}, vocab {manifest['vocab_size']}, "
            f"{t['steps']} steps, final loss {t['final_loss']}, "
            f"wall {manifest['wall_seconds']} s (compiled: {t['compiled']})\n"
            f"  probe: well-formed call {p.get('tool_call_wellformed', 0):.0%}, "
            f"valid (offered name) {p['tool_call_valid']:.0%}, right tool "
            f"{p['tool_name_correct']:.0%}, exact call {p['tool_args_exact']:.0%}, "
            f"instructions followed {p['instruction_followed']:.0%} (n={p['n_tool']})\n"
            f"  config hash {manifest['config_hash'][:16]}")


@app.command()
@exits_on_error
def build(
    out: Path = typer.Option(..., "--out", help="model directory to write"),
    seed: int = typer.Option(0, "--seed", help="seed for corpus, init and data order"),
    size: str = typer.Option("tiny", "--size", help=" | ".join(SIZES)),
    force: bool = typer.Option(False, "--force", help="rebuild even if a cached build exists"),
    cache_dir: Path = typer.Option(None, "--cache-dir",
                                   help="cache root (default $HAT_CACHE_DIR, else HAT_HOME/cache)"),
    threads: int = typer.Option(None, "--threads", help="torch CPU threads (default: torch's)"),
) -> None:
    """Build the base model of SIZE from SEED into OUT (or reuse a cached build)."""
    import torch

    from hat_core.basemodel.build import build_base_model

    if threads:
        torch.set_num_threads(threads)
    cache = (cache_dir or load_settings().resolved_cache_dir()) / "base-models"
    with long_command("base-build") as term:
        result = build_base_model(out, size=size, seed=seed, cache_dir=cache, force=force,
                                  on_event=BuildDisplay(term))
        if result.reused:
            term.print(f"reused cached base model at {result.cache_path or result.path}",
                       highlight=False)
        term.print(_summary(result.manifest, result.path), markup=False, highlight=False)


@app.command("probe")
@exits_on_error
def probe_cmd(
    model_dir: Path = typer.Argument(..., help="model directory"),
    n: int = typer.Option(20, "--n", help="prompts per kind"),
    seed: int = typer.Option(0, "--seed"),
    max_new_tokens: int = typer.Option(160, "--max-new-tokens", help="generation length"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
) -> None:
    """Probe MODEL_DIR: tool calls on unseen tool names and simple instructions."""
    from hat_core.basemodel.loading import load_base
    from hat_core.basemodel.probe import probe

    model, tokenizer = load_base(model_dir)
    result = probe(model, tokenizer, n=n, seed=seed, max_new_tokens=max_new_tokens)
    if as_json:
        typer.echo(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
        return
    typer.echo(f"well-formed call {result.tool_call_wellformed:.0%}, valid (offered name) "
               f"{result.tool_call_valid:.0%}, right tool "
               f"{result.tool_name_correct:.0%}, exact call {result.tool_args_exact:.0%}, "
               f"instructions followed {result.instruction_followed:.0%} (n={n} each)")


@app.command("grow")
@exits_on_error
def grow_cmd(
    model_dir: Path = typer.Argument(..., help="model directory to grow"),
    layers: int = typer.Option(..., "--layers", help="decoder layers of the grown model "
                                                     "(more than now, at most twice)"),
    out: Path = typer.Option(..., "--out", help="new model directory to write"),
) -> None:
    """Grow MODEL_DIR to LAYERS decoder layers computing the same function (block expansion:
    each copy's output projections zeroed), for fine-tuning with more depth."""
    from hat_core.basemodel.grow import grow_depth

    report = grow_depth(model_dir, out, layers=layers)
    typer.echo(f"{out}: {report.layers_before} -> {report.layers_after} layers (copies after "
               f"blocks {', '.join(map(str, report.inserted_after))}), "
               f"{report.parameters_before:,} -> {report.parameters_after:,} parameters, "
               f"largest logit difference {report.max_logit_difference:.1e}")
