"""`hat sim ...`: run the live-stream simulator under a harness and show its episodes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_core.errors import ConfigError
from hat_core.harness.io import load_harness
from hat_core.sim.batch import Result, make_policy, play, simulate, summarise, world
from hat_core.sim.policy import POLICIES, Policy

app = typer.Typer(help="Run the live-stream simulator and inspect its episodes.",
                  no_args_is_help=True)

HARNESS = typer.Option(..., "--harness", help="harness file (.yaml or .json)")
POLICY = typer.Option("oracle", "--policy", help=f"one of: {', '.join(POLICIES)}")
MEMORISED = typer.Option(None, "--memorised",
                         help="harness the memorising policy knows (default: --harness)")
SEED = typer.Option(0, "--seed", help="seed of the catalog and the scenario bank")


def _policy(name: str, harness_file: Path, memorised: Path | None, seed: int) -> Policy:
    known = load_harness(memorised or harness_file) if name == "memorising" else None
    try:
        return make_policy(name, known, random.Random(seed))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


@app.command()
@exits_on_error
def run(
    harness: Path = HARNESS,
    policy: str = POLICY,
    episodes: int = typer.Option(100, "--episodes", min=1, help="number of episodes"),
    seed: int = SEED,
    memorised: Path | None = MEMORISED,
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Play N episodes; print the pass rate, the mean of each reward and failure counts."""
    h = load_harness(harness)
    results = simulate(h, _policy(policy, harness, memorised, seed), episodes=episodes,
                       seed=seed)
    summary = summarise(results)
    if as_json:
        typer.echo(json.dumps({"harness": str(harness), "policy": policy, "seed": seed,
                               **summary.to_dict()}, ensure_ascii=False, indent=2))
        return
    typer.echo(f"{episodes} episodes, policy {policy}, seed {seed}, "
               f"harness {h.content_hash()[:12]}")
    typer.echo(f"pass rate           {summary.pass_rate:.3f}")
    for name, value in summary.rewards.items():
        typer.echo(f"{name:<19} {value:.3f}")
    typer.echo("failures")
    for name, count in summary.failures.items():
        typer.echo(f"  {name:<19} {count}")


@app.command()
@exits_on_error
def show(
    harness: Path = HARNESS,
    seed: int = SEED,
    episode: int = typer.Option(0, "--episode", min=0, help="index in the seed's scenario bank"),
    policy: str = POLICY,
    memorised: Path | None = MEMORISED,
    as_json: bool = typer.Option(False, "--json", help="print the episode as JSON"),
) -> None:
    """Print one episode: the conversation, hook firings, rewards and the verdict."""
    h = load_harness(harness)
    catalog, scenarios = world(seed, episode + 1)
    result = play(h, scenarios[episode], catalog, _policy(policy, harness, memorised, seed))
    if as_json:
        typer.echo(json.dumps({"episode": result.episode.to_dict(),
                               "scores": result.scores.rewards(),
                               "verdict": result.verdict.label}, ensure_ascii=False, indent=2))
        return
    typer.echo("\n".join(describe(result)))


def describe(result: Result) -> list[str]:
    """A readable transcript of one scored episode."""
    ep = result.episode
    lines = [f"scenario {ep.scenario_id}   harness {ep.harness_hash[:12]}", ""]
    for msg in ep.messages:
        lines.extend(_message(msg))
    lines.append("")
    for f in ep.hook_firings:
        lines.append(f"hook {f.hook_id} ({f.event}, turn {f.turn}, attempt {f.attempt}): "
                     f"{f.action} {f.message}")
    lines.append("rewards  " + "  ".join(f"{k}={v:.2f}"
                                         for k, v in result.scores.rewards().items()))
    v = result.verdict
    lines.append("verdict  " + ("pass" if v.passed else f"{v.failure}: {v.reason}"))
    return lines


def _message(msg: dict) -> list[str]:
    role = msg["role"]
    if role == "system":
        first = msg["content"].splitlines()[0] if msg["content"] else ""
        return [f"[system] {first} ... ({len(msg['content'])} chars)"]
    if role == "tool":
        return [f"  [tool {msg['tool_call_id']}] {msg['content']}"]
    out = []
    if msg.get("reasoning_content"):
        out.append(f"  <think> {msg['reasoning_content']}")
    for call in msg.get("tool_calls") or ():
        fn = call["function"]
        out.append(f"[{role}] -> {fn['name']}({fn['arguments']})")
    if msg.get("content"):
        out.append(f"[{role}] {msg['content']}")
    return out
