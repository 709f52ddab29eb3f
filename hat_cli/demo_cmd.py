"""`hat demo`: the story so far on the embedded default, end to end, with timings.

It creates the embedded SQL store under `HAT_HOME` (default `.hat/`), validates and stores the
example weekly harness versions (v1 -> v4), diffs each week (surface vs semantic), shows in the
simulator what a model that memorised v1 does after each edit, and makes HSA variants of the
latest version. Each step prints what it did and how long it took; the closing table says where
everything is. Later milestones add training, evaluation and the console to this story.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from hat_cli.errors import exits_on_error

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "harnesses"
VERSIONS = ("v1", "v2", "v3", "v4")


@dataclass
class DemoState:
    """What the steps hand each other, and what the closing table reports."""

    episodes: int
    seed: int
    harnesses: dict = field(default_factory=dict)
    numbers: dict = field(default_factory=dict)
    artefacts: dict[str, str] = field(default_factory=dict)


def demo(
    episodes: int = typer.Option(150, "--episodes", min=15, help="simulated episodes per run"),
    seed: int = typer.Option(0, "--seed", help="seed of the simulator and of HSA"),
    no_ui: bool = typer.Option(False, "--no-ui", help="do not start the console at the end"),
) -> None:
    """Run the whole story on the embedded default and say where each artefact is."""
    state = exits_on_error(_run)(episodes=episodes, seed=seed)
    if not no_ui:
        _console(state)


def _run(*, episodes: int, seed: int) -> DemoState:
    console = Console()
    state = DemoState(episodes=episodes, seed=seed)
    steps: list[tuple[str, Callable[[DemoState, Console], None]]] = [
        ("Create the embedded SQL store", _store),
        ("Validate the example harness versions", _validate),
        ("Submit v1 .. v4 as weekly versions", _submit),
        ("Diff each weekly edit (surface vs semantic)", _diff),
        ("Simulate the oracle under every version", _oracle),
        ("Simulate a model that memorised v1", _memorising),
        ("Augment the newest version (HSA, training pool)", _augment),
        ("Queue the memorising model's failures on v2 for review", _bad_cases),
        ("Create the demo logins", _logins),
    ]
    timings = []
    for i, (title, step) in enumerate(steps, 1):
        console.rule(f"[bold]{i}/{len(steps)} {title}")
        start = time.perf_counter()
        step(state, console)
        timings.append((title, time.perf_counter() - start))
    _closing(console, timings, state)
    return state


def _store(state: DemoState, console: Console) -> None:
    from db import migrate
    from hat_core.settings import load_settings

    url = load_settings().resolved_database_url()
    migrate.upgrade(url)
    state.artefacts["SQL store"] = url
    console.print(f"store at {url}, revision {migrate.current(url)}")


def _validate(state: DemoState, console: Console) -> None:
    from hat_core.harness_io import load_harness

    for name in VERSIONS:
        h = load_harness(EXAMPLES / f"{name}.yaml")
        state.harnesses[name] = h
        console.print(f"{name}: {len(h.skills)} skills, {len(h.tools)} tools, "
                      f"{len(h.hooks)} hooks, hash {h.content_hash()[:12]}")


def _submit(state: DemoState, console: Console) -> None:
    from db.engine import in_transaction, make_engine, make_session_factory
    from db.harness_repo import submit_harness

    factory = make_session_factory(make_engine(state.artefacts["SQL store"]))
    for name, h in state.harnesses.items():
        version = in_transaction(factory, lambda s, h=h, name=name: submit_harness(
            s, harness=h, author="demo", note=f"example week {name}"))
        state.numbers[name] = version.number
        console.print(f"{name} -> {version.line} version {version.number}")


def _diff(state: DemoState, console: Console) -> None:
    from hat_core.diff import diff_harness

    for old, new in zip(VERSIONS, VERSIONS[1:], strict=False):
        d = diff_harness(state.harnesses[old], state.harnesses[new])
        verdict = "surface only: HSA covers it" if d.is_surface_only else "semantic: retrain"
        console.print(f"{old} -> {new}: {len(d.surface)} surface, {len(d.semantic)} semantic "
                      f"changes ({verdict})")
        for change in d.semantic:
            console.print(f"    [semantic] {change.summary}")


def _simulate_all(state: DemoState, policy_for) -> dict[str, float]:
    from hat_core.sim.batch import simulate, summarise

    return {name: summarise(simulate(h, policy_for(name), episodes=state.episodes,
                                     seed=state.seed)).pass_rate
            for name, h in state.harnesses.items()}


def _oracle(state: DemoState, console: Console) -> None:
    from hat_core.sim.policy import OraclePolicy

    rates = _simulate_all(state, lambda _name: OraclePolicy())
    console.print("pass rate: " + ", ".join(f"{k} {v:.0%}" for k, v in rates.items()))


def _memorising(state: DemoState, console: Console) -> None:
    from hat_core.sim.policy import MemorisingPolicy

    v1 = state.harnesses["v1"]
    rates = _simulate_all(state, lambda _name: MemorisingPolicy(v1))
    console.print("pass rate: " + ", ".join(f"{k} {v:.0%}" for k, v in rates.items()))
    console.print("a model that memorised v1's names breaks when the harness changes: "
                  "this is what harness-aware training fixes")


def _augment(state: DemoState, console: Console) -> None:
    from hat_core.diff import diff_harness
    from hat_core.hsa.augment import augment_many

    newest = state.harnesses[VERSIONS[-1]]
    for i, variant in enumerate(augment_many(newest, 4, state.seed)):
        d = diff_harness(newest, variant.harness)
        kinds = "surface only" if not [c for c in d.semantic
                                       if not c.element_id.startswith("distractor.")] \
            else "SEMANTIC"
        console.print(f"variant {i}: {', '.join(variant.transforms)} ({kinds})")


def _sessions(state: DemoState):
    from db.engine import make_engine, make_session_factory

    return make_session_factory(make_engine(state.artefacts["SQL store"]))


def _bad_cases(state: DemoState, console: Console) -> None:
    from db.badcases_repo import BadCaseFilter, add_bad_case, count_bad_cases
    from db.engine import in_transaction
    from db.harness_repo import get_version
    from hat_core.sim.batch import simulate
    from hat_core.sim.policy import MemorisingPolicy

    sessions = _sessions(state)
    with sessions() as s:
        version = get_version(s, number=state.numbers["v2"], line=state.harnesses["v2"].harness)
        queued = count_bad_cases(s, where=BadCaseFilter(harness_version_id=version.id))
    if queued:
        console.print(f"{queued} bad cases of v2 already queued")
        return
    results = simulate(state.harnesses["v2"], MemorisingPolicy(state.harnesses["v1"]),
                       episodes=state.episodes, seed=state.seed)
    failed = [r for r in results if not r.verdict.passed]

    def store(s):
        for r in failed:
            scores = {**r.scores.rewards(), "reason": r.verdict.reason,
                      "failures": list(r.verdict.failures)}
            add_bad_case(s, episode=r.episode.to_dict(), harness_version_id=version.id,
                         failure_type=r.verdict.failure or "no_answer", judge_scores=scores,
                         actor="demo")

    in_transaction(sessions, store)
    console.print(f"{len(failed)} of {len(results)} episodes failed; queued for review")


DEMO_PASSWORD = "hat-demo-2026"


def _logins(state: DemoState, console: Console) -> None:
    from db.engine import in_transaction
    from db.users_repo import add_user, get_user

    def ensure(s):
        for role in ("viewer", "reviewer", "operator", "admin"):
            if get_user(s, name=role) is None:
                add_user(s, name=role, role=role, password=DEMO_PASSWORD, actor="demo")

    in_transaction(_sessions(state), ensure)
    state.artefacts["console logins"] = (f"viewer / reviewer / operator / admin, password "
                                         f"{DEMO_PASSWORD}")
    console.print("users viewer, reviewer, operator, admin (one per role)")


def _console(state: DemoState) -> None:
    import os
    import subprocess

    from hat_cli.ui_cmd import command

    host, port = "127.0.0.1", 8501
    print(f"console on http://{host}:{port} ({state.artefacts['console logins']}); "
          "Ctrl+C to stop", flush=True)
    env = {**os.environ, "HAT_DATABASE_URL": state.artefacts["SQL store"]}
    try:
        subprocess.call(command(host, port), env=env)
    except KeyboardInterrupt:
        pass


def _closing(console: Console, timings: list[tuple[str, float]], state: DemoState) -> None:
    table = Table(title="hat demo: steps")
    table.add_column("step")
    table.add_column("seconds", justify="right")
    for title, seconds in timings:
        table.add_row(title, f"{seconds:.1f}")
    table.add_row("total", f"{sum(s for _, s in timings):.1f}")
    console.print(table)
    for what, where in state.artefacts.items():
        console.print(f"{what}: {where}")
    console.print("next: `hat harness list`, `hat harness diff 1 2`, "
                  "`hat sim show --harness examples/harnesses/v2.yaml --seed 0 --episode 3`")
