"""`hat harness ...`: validate, render and diff harness files."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_cli.harness_args import load_harness_arg
from hat_core.diff.api import diff_harness, format_diff
from hat_core.harness.io import load_harness
from hat_core.harness.render import render

app = typer.Typer(help="Validate, render and compare harness versions.", no_args_is_help=True)


@app.command()
@exits_on_error
def validate(file: Path = typer.Argument(..., help="harness file (.yaml or .json)")) -> None:
    """Exit 0 if FILE is a valid harness; else exit 2 and list every problem."""
    harness = load_harness(file)
    typer.echo(
        f"{file}: valid harness '{harness.harness}' ({len(harness.skills)} skills, "
        f"{len(harness.tools)} tools, {len(harness.hooks)} hooks), "
        f"hash {harness.content_hash()[:12]}"
    )


@app.command("render")
@exits_on_error
def render_cmd(
    file: Path = typer.Argument(..., help="harness file"),
    as_json: bool = typer.Option(False, "--json", help="print {system_prompt, tools} as JSON"),
) -> None:
    """Print the system prompt and tool list the model sees under FILE."""
    rendered = render(load_harness(file))
    if as_json:
        typer.echo(json.dumps({"system_prompt": rendered.system_prompt,
                               "tools": rendered.tools}, ensure_ascii=False, indent=2))
        return
    typer.echo(rendered.system_prompt)
    typer.echo("\n# tools")
    typer.echo(json.dumps(rendered.tools, ensure_ascii=False, indent=2))


@app.command("diff")
@exits_on_error
def diff_cmd(
    before: str = typer.Argument(..., help="the older harness: a file, or a version N / LINE:N"),
    after: str = typer.Argument(..., help="the newer harness: a file, or a version N / LINE:N"),
    as_json: bool = typer.Option(False, "--json", help="print the changes as JSON"),
) -> None:
    """Print the semantic diff of two harness versions, each change surface or semantic."""
    diff = diff_harness(load_harness_arg(before), load_harness_arg(after))
    if as_json:
        typer.echo(json.dumps(diff.to_dict(), ensure_ascii=False, indent=2))
        return
    typer.echo(format_diff(diff))
