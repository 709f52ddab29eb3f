"""`hat latency ENDPOINT_OR_MODEL`: streaming latency at several concurrency levels, gated.

A local model directory is served with `transformers serve` on 127.0.0.1 for the run and
stopped afterwards; a URL (e.g. vLLM's `http://host:8000`) is measured as it is.
Exit 0 when every gate of the profile passes, 2 when one fails (each failed gate is printed).
"""

from __future__ import annotations

from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_core.errors import ConfigError, Problem
from hat_core.evaluation.report import latency_markdown, write_report
from hat_core.harness.io import load_harness
from hat_core.inference.server import transformers_server
from hat_core.latency.measure import LatencyReport, first_model_id, harness_requests, measure
from hat_core.latency.profiles import PROFILES, get_profile

DEFAULT_HARNESS = Path("examples") / "harnesses" / "v1.yaml"


def parse_levels(text: str) -> list[int]:
    """`"1,4,8"` -> [1, 4, 8]; anything else raises `ConfigError`."""
    try:
        levels = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        levels = []
    if not levels or min(levels) < 1:
        raise ConfigError(f"bad --concurrency {text!r}",
                          [Problem("concurrency", "comma-separated positive integers, e.g. 1,4,8")])
    return levels


def _run(target: str, model: str | None, run_args: dict) -> LatencyReport:
    if target.startswith(("http://", "https://")):
        base = target.rstrip("/")
        name = model or first_model_id(base)
        if not name:
            raise ConfigError(f"{base}/v1/models lists no model: give --model")
        return measure(base, name, **run_args)
    path = Path(target)
    if not path.is_dir():
        raise ConfigError(f"{target} is neither an http(s) URL nor a model directory")
    with transformers_server(path) as base:
        return measure(base, model or str(path), **run_args)


@exits_on_error
def latency(
    target: str = typer.Argument(..., metavar="ENDPOINT_OR_MODEL",
                                 help="an http(s) endpoint or a local model directory"),
    concurrency: str = typer.Option("1,4,8", "--concurrency", help="levels, e.g. 1,4,8"),
    requests: int = typer.Option(100, "--requests", min=1, help="requests per level"),
    profile: str = typer.Option("h20", "--profile", help=f"one of: {', '.join(PROFILES)}"),
    harness: Path = typer.Option(DEFAULT_HARNESS, "--harness", help="harness file"),
    max_tokens: int = typer.Option(64, "--max-tokens", min=1, help="tokens per answer"),
    model: str | None = typer.Option(None, "--model", help="model name at the endpoint"),
    timeout: float = typer.Option(120.0, "--timeout", help="seconds per request"),
    out: Path | None = typer.Option(None, "--out", help="report JSON (+ .md beside)"),
) -> None:
    """Measure TTFT, end-to-end time and tokens/s; apply a gate profile (exit 2 on failure)."""
    gate_profile = get_profile(profile)
    specs = harness_requests(load_harness(harness), requests)
    run_args = {"specs": specs, "concurrency": parse_levels(concurrency),
                "profile": gate_profile, "max_tokens": max_tokens, "timeout_s": timeout}
    report = _run(target, model, run_args)
    if out:
        write_report(report, out)
    typer.echo(latency_markdown(report))
    failed = [g for g in report.gates if not g.passed]
    for g in failed:
        typer.echo(f"gate failed: {g.gate.describe()} (measured {g.value})", err=True)
    if failed:
        raise typer.Exit(code=2)
