"""`hat demo`: the whole story on the embedded default, end to end, with timings.

It creates the embedded stores under `HAT_HOME` (default `.hat/`), validates the example weekly
harness versions (v1 -> v4), diffs each week (surface vs semantic), shows in the simulator what
a model that memorised v1 does after each edit, makes HSA variants, creates one login per role
and loads the base model. Then the weeks (`hat_cli.demo_story`):

1. v1: the real retrain flow trains the champion with the HAT recipe while a child process
   trains a fixed-harness model on the same SFT budget; both are scored on the same cases;
   the champion is promoted into slot `ab`;
2. v2 (renames): the service's zero-shot check of the champion (a retrain only when it does
   not pass), and the same check of the fixed-harness model;
3. v3 (a new skill and tool): the service reacts (zero-shot check, retrain, gates,
   `challenger` when every gate passes), the candidate paired with the champion on v3;
4. the slot's champion and challenger behind the A/B gateway (sticky arms, exposures), and a
   bad case reviewed and sent to training.

Each step prints what it did and how long it took; the closing tables give the numbers per
week and where everything is. Then the console starts (`--no-ui`: it does not).

    hat demo                      # the story, then the console on http://127.0.0.1:8501
    hat demo --no-ui              # scripted use
    hat demo --summary s.json     # also the story's numbers as JSON
    hat demo --config FILE        # another retrain config (default retrain_demo.yaml)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.table import Table

from hat_cli import demo_retrain, demo_story
from hat_cli.errors import exits_on_error
from hat_cli.terminal import Terminal, long_command

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "harnesses"
VERSIONS = ("v1", "v2", "v3", "v4")


@dataclass
class DemoState:
    """What the steps hand each other, and what the closing table reports."""

    episodes: int
    seed: int
    config_path: Path = demo_retrain.DEMO_CONFIG
    home: Path = Path(".hat")
    config: object = None
    tracking: object = None
    harnesses: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)
    outcomes: dict = field(default_factory=dict)
    artefacts: dict[str, str] = field(default_factory=dict)
    story: dict = field(default_factory=lambda: {"weeks": []})  # `demo_story`'s numbers
    fixed: object = None  # `demo_story.FixedArm`
    _factory: object = None

    def sessions(self):
        """The SQL store's session factory (made once)."""
        if self._factory is None:
            from db.engine import make_engine, make_session_factory

            self._factory = make_session_factory(make_engine(self.artefacts["SQL store URL"]))
        return self._factory


def demo(
    episodes: int = typer.Option(150, "--episodes", min=15, help="simulated episodes per run"),
    seed: int = typer.Option(0, "--seed", help="seed of the simulator and of HSA"),
    config: Path = typer.Option(demo_retrain.DEMO_CONFIG, "--config",
                                help="retrain config of the two training jobs"),
    no_ui: bool = typer.Option(False, "--no-ui", help="do not start the console at the end"),
    summary: Path = typer.Option(None, "--summary",
                                 help="write the story's numbers (per week) as JSON here"),
) -> None:
    """Run the whole story on the embedded default and say where each artefact is."""
    state = exits_on_error(_run)(episodes=episodes, seed=seed, config=config, summary=summary)
    if not no_ui:
        _console(state)


def _run(*, episodes: int, seed: int, config: Path, summary: Path | None = None) -> DemoState:
    state = DemoState(episodes=episodes, seed=seed, config_path=Path(config).resolve())
    timings = []
    steps = _steps()
    with long_command("demo") as term:
        with _prefect_api():  # stopped when the demo ends, on SIGTERM too
            for i, (title, step) in enumerate(steps, 1):
                with term.stage(f"{i}/{len(steps)} {title}", heading=True) as stage:
                    step(state, term)
                timings.append((title, stage.seconds))
        _closing(term, timings, state)
        if summary is not None:
            path = demo_story.write_summary(state, summary, sum(s for _, s in timings))
            term.print(f"summary: {path}", markup=False, highlight=False)
    return state


def _prefect_api():
    """The configured Prefect API, else a local server under the home for the demo's jobs
    (a child of this process: it ends with the demo)."""
    from flows.prefect_server import prefect_api
    from hat_cli.retrain_cmd import prepare_prefect_env
    from hat_core.settings import load_settings

    settings = load_settings()
    prepare_prefect_env(settings)
    return prefect_api(Path(settings.home).resolve() / "prefect")


def _store(state: DemoState, console: Terminal) -> None:
    from db import migrate
    from flows.config import load_retrain_config
    from hat_core.settings import load_settings

    settings = load_settings()
    state.home = Path(settings.home).resolve()
    state.config = load_retrain_config(state.config_path)
    demo_retrain.prepare_environment(state.home)
    url = settings.resolved_database_url()
    migrate.upgrade(url)
    state.artefacts["SQL store URL"] = url
    if url.startswith("sqlite:///"):
        state.artefacts["SQL store"] = url.removeprefix("sqlite:///")
    console.print(f"SQL store at {url}, revision {migrate.current(url)}", soft_wrap=True)
    from flows.retrain import make_tracking

    state.tracking = make_tracking(settings)
    uri = state.tracking.tracking_uri
    state.artefacts["MLflow tracking URI"] = uri
    if uri.startswith("sqlite:///"):
        state.artefacts["MLflow store"] = uri.removeprefix("sqlite:///")
    if state.tracking.artifact_root is not None:
        state.artefacts["MLflow artifacts"] = str(state.tracking.artifact_root)
    state.tracking.client.search_experiments()  # creates (migrates) a local MLflow store
    console.print(f"MLflow tracking at {uri}", soft_wrap=True)


def _validate(state: DemoState, console: Terminal) -> None:
    from hat_core.harness.io import load_harness

    for name in VERSIONS:
        h = load_harness(EXAMPLES / f"{name}.yaml")
        state.harnesses[name] = h
        console.print(f"{name}: {len(h.skills)} skills, {len(h.tools)} tools, "
                      f"{len(h.hooks)} hooks, hash {h.content_hash()[:12]}")


def _diff(state: DemoState, console: Terminal) -> None:
    from hat_core.diff.api import diff_harness

    for old, new in zip(VERSIONS, VERSIONS[1:], strict=False):
        d = diff_harness(state.harnesses[old], state.harnesses[new])
        verdict = "surface only: HSA covers it" if d.is_surface_only else "semantic: retrain"
        console.print(f"{old} -> {new}: {len(d.surface)} surface, {len(d.semantic)} semantic "
                      f"changes ({verdict})")
        for change in d.semantic:
            console.print(f"    [semantic] {change.summary}", markup=False)


def _simulate_all(state: DemoState, policy_for) -> dict[str, float]:
    from hat_core.sim.batch import simulate, summarise

    return {name: summarise(simulate(h, policy_for(name), episodes=state.episodes,
                                     seed=state.seed)).pass_rate
            for name, h in state.harnesses.items()}


def _oracle(state: DemoState, console: Terminal) -> None:
    from hat_core.sim.policy import OraclePolicy

    rates = _simulate_all(state, lambda _name: OraclePolicy())
    console.print("pass rate: " + ", ".join(f"{k} {v:.0%}" for k, v in rates.items()))


def _memorising(state: DemoState, console: Terminal) -> None:
    from hat_core.sim.policy import MemorisingPolicy

    v1 = state.harnesses["v1"]
    rates = _simulate_all(state, lambda _name: MemorisingPolicy(v1))
    console.print("pass rate: " + ", ".join(f"{k} {v:.0%}" for k, v in rates.items()))
    console.print("a model that memorised v1's names breaks when the harness changes: "
                  "this is what harness-aware training fixes")


def _augment(state: DemoState, console: Terminal) -> None:
    from hat_core.diff.api import diff_harness
    from hat_core.hsa.augment import augment_many

    newest = state.harnesses[VERSIONS[-1]]
    for i, variant in enumerate(augment_many(newest, 4, state.seed)):
        d = diff_harness(newest, variant.harness)
        kinds = "surface only" if not [c for c in d.semantic
                                       if not c.element_id.startswith("distractor.")] \
            else "SEMANTIC"
        console.print(f"variant {i}: {', '.join(variant.transforms)} ({kinds})")


DEMO_PASSWORD = "hat-demo-2026"


def _logins(state: DemoState, console: Terminal) -> None:
    from db.engine import in_transaction
    from db.users_repo import add_user, get_user

    def ensure(s):
        for role in ("viewer", "reviewer", "operator", "admin"):
            if get_user(s, name=role) is None:
                add_user(s, name=role, role=role, password=DEMO_PASSWORD, actor="demo")

    in_transaction(state.sessions(), ensure)
    state.artefacts["console logins"] = (f"viewer / reviewer / operator / admin, password "
                                         f"{DEMO_PASSWORD}")
    console.print("users viewer, reviewer, operator, admin (one per role)")


def _base(state: DemoState, console: Terminal) -> None:
    demo_retrain.base_model(state, console)


def _promote(state: DemoState, console: Terminal) -> None:
    demo_retrain.promote_champion(state, console)


def _steps() -> list[tuple[str, Callable[[DemoState, Terminal], None]]]:
    return [
        ("Create the embedded SQL and MLflow stores", _store),
        ("Validate the example harness weeks v1 .. v4", _validate),
        ("Diff each weekly edit (surface vs semantic)", _diff),
        ("Simulate the oracle under every week", _oracle),
        ("Simulate a model that memorised v1", _memorising),
        ("Augment the newest week (HSA, training pool)", _augment),
        ("Create the demo logins", _logins),
        ("Build or reuse the base model", _base),
        ("Week 1 (v1): the HAT champion, and a fixed-harness model beside it",
         demo_story.week1),
        ("Promote the champion (slot ab)", _promote),
        ("Week 2 (v2, renames): zero-shot checks of both models", demo_story.week2),
        ("Week 3 (v3, a new skill): the service reacts", demo_story.week3),
        ("The A/B slot: champion and challenger behind the gateway", demo_story.ab_slot),
        ("Review a bad case and send it to training", demo_story.review),
    ]


def _console(state: DemoState) -> None:
    import os
    import subprocess

    from hat_cli.ui_cmd import command

    host, port = "127.0.0.1", 8501
    print(f"console on http://{host}:{port} ({state.artefacts['console logins']}); "
          "Ctrl+C to stop", flush=True)
    env = {**os.environ, "HAT_DATABASE_URL": state.artefacts["SQL store URL"],
           "HAT_MLFLOW_TRACKING_URI": state.artefacts["MLflow tracking URI"]}
    try:
        subprocess.call(command(host, port), env=env)
    except KeyboardInterrupt:
        pass


def _closing(term: Terminal, timings: list[tuple[str, float]], state: DemoState) -> None:
    table = Table(title="hat demo: steps")
    table.add_column("step")
    table.add_column("seconds", justify="right")
    for title, seconds in timings:
        table.add_row(title, f"{seconds:.1f}")
    table.add_row("total", f"{sum(s for _, s in timings):.1f}")
    term.print(demo_story.week_table(state))
    term.print(table)
    term.print("[bold]where everything is[/]")
    for what, where in state.artefacts.items():
        term.print(f"  {what}: {where}", markup=False, highlight=False)
    term.print(f"about the model: {model_note(state)}")
    term.hint("`hat ui` (Harness diff, Runs, Release pages), `hat harness diff 1 2`, "
              f"`hat login operator` (password {DEMO_PASSWORD}), then "
              "`hat harness submit examples/harnesses/v4.yaml --note wk4` and "
              f"`hat retrain --harness-version 4 --config {_shown(state.config_path)}`")
    for text in demo_retrain.ui_hints(state):
        term.hint(text)


def model_note(state: DemoState) -> str:
    """What the closing lines say about the model: the default config's caveat, or for
    another config (`--config`) which base and budget this run used, and no claim."""
    if state.config_path.resolve() == demo_retrain.DEMO_CONFIG.resolve():
        return QUALITY
    if state.config is None:
        from flows.config import load_retrain_config

        state.config = load_retrain_config(state.config_path)
    config = state.config
    base = config.base_model or f"the `{config.base_size}`-size base"
    steps = config.sft.get("max_steps", "the stage's default")
    return (f"this run's config ({_shown(state.config_path)}) trains from {base} with "
            f"{steps} HSA-SFT steps for v1; the week table above has its numbers, each with "
            "its interval, and docs/operations.md what the shipped configs measured.")


def _shown(path: Path) -> str:
    """`path` relative to the working folder when it is under it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


QUALITY = ("the default config (examples/configs/retrain_demo.yaml) trains from the `test`-size "
           "base (about 0.15M parameters) with a few steps per stage, so that the three weeks "
           "fit in minutes on 2 CPU cores: the flows, the store, MLflow, the gates, the registry "
           "and the gateway are real, but every model scores 0 and every paired verdict is "
           "inconclusive (0 against 0 shows nothing). The CPU recipe that learns the job "
           "(docs/results.md) starts from the shipped examples/models/toy-long and needs about "
           "1,800 packed SFT steps per arm (35-60 minutes on 2 cores); `hat demo --config FILE` "
           "runs the story with any retrain config, e.g. "
           "examples/configs/retrain_demo_toylong.yaml (the shipped base, 400 steps per arm, "
           "20-24 minutes by the CPU).")
