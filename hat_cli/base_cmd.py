"""`hat base ...`: build the embedded base model from a seed, and probe a model directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from hat_cli.errors import exits_on_error
from hat_core.basemodel.sizes import SIZES

app = typer.Typer(help="Build and probe the base model.", no_args_is_help=True)
console = Console(stderr=True)


def default_cache_dir() -> Path:
    """`$HAT_CACHE_DIR` or `~/.cache/hat-ops`; base models live in its `base-models/`."""
    return Path(os.environ.get("HAT_CACHE_DIR") or Path.home() / ".cache" / "hat-ops")


class BuildDisplay:
    """Turns build events into a rich progress bar and status lines."""

    def __init__(self, progress: Progress):
        self.progress = progress
        self.task = None

    def __call__(self, stage: str, info: dict) -> None:
        if stage == "step":
            if not self.progress.console.is_terminal and info["step"] % 100 == 0:
                self.progress.console.print(f"step {info['step']}/{info['total']} "
                                            f"loss {info['loss']:.3f}")
            if self.task is None:
                self.task = self.progress.add_task("training", total=info["total"], loss="")
            self.progress.update(self.task, completed=info["step"], loss=f"loss {info['loss']:.3f}")
        elif stage == "reused":
            self.progress.console.print(f"reused cached base model at {info['path']}")
        else:
            details = ", ".join(f"{k} {v}" for k, v in info.items())
            self.progress.console.print(f"{stage}: {details}")


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
                                   help="cache root (default $HAT_CACHE_DIR or ~/.cache/hat-ops)"),
    threads: int = typer.Option(None, "--threads", help="torch CPU threads (default: torch's)"),
) -> None:
    """Build the base model of SIZE from SEED into OUT (or reuse a cached build)."""
    import torch

    from hat_core.basemodel.build import build_base_model

    if threads:
        torch.set_num_threads(threads)
    cache = (cache_dir or default_cache_dir()) / "base-models"
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
               "{task.total}"), TextColumn("{task.fields[loss]}"), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=console) as progress:
        result = build_base_model(out, size=size, seed=seed, cache_dir=cache, force=force,
                                  on_event=BuildDisplay(progress))
    if result.reused:
        typer.echo(f"reused cached base model at {result.cache_path or result.path}")
    typer.echo(_summary(result.manifest, result.path))


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
