"""The flow half of `hat demo`: base model, stored weeks, retrain jobs and what they decided.

Each step runs the real thing in this process: `flows.stages.base_model_dir` (build or reuse
the embedded base of the config's `base_size`), the `retrain` flow (`flows.retrain.retrain`,
what `hat retrain` runs, with the service's own trigger kind `harness-change`, so its job is
the one the service and the console see), and `db.promotion.promote_slot` (slot `ab`).
Verdicts are read back from the store and MLflow, so a re-run in the same home reports the
jobs it finds "already handled" the same way.

The default config is `examples/configs/retrain_demo.yaml` (a deliberately small base and
short stages, so the story fits in minutes on 2 CPU cores); `hat demo --config FILE` takes any
retrain config.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from hat_cli.demo_progress import StageWatcher, find_job
from hat_core.release.rules import gates_of, gates_verdict

ROOT = Path(__file__).resolve().parent.parent
DEMO_CONFIG = ROOT / "examples" / "configs" / "retrain_demo.yaml"
TRIGGER = "harness-change"  # the service's trigger kind: one job per version, as `hat serve`


@dataclass(frozen=True)
class JobOutcome:
    """What one retrain job left behind: the job, its stage runs, its model version (if it
    retrained), the zero-shot verdict, and its work folder."""

    job: object
    stages: list
    model: object | None
    zero_shot: dict | None
    work: Path


def prepare_environment(home: Path) -> None:
    """Prefect's home, API and results under the HAT home (as `hat retrain`); explicit
    variables win."""
    from hat_cli.retrain_cmd import prepare_prefect_env
    from hat_core.settings import load_settings

    prepare_prefect_env(load_settings())


def cache_root() -> Path:
    """Where the embedded base is cached (`$HAT_CACHE_DIR`, else `<HAT_HOME>/cache`)."""
    from hat_core.settings import load_settings

    return load_settings().resolved_cache_dir()


def ui_hints(state) -> list[str]:
    """How to open the demo's MLflow store and its Prefect runs in a browser."""
    from hat_cli.retrain_cmd import prefect_ui_hint
    from hat_core.settings import load_settings

    hints = []
    uri = state.artefacts.get("MLflow tracking URI")
    if uri and not uri.startswith("http"):
        hints.append(f"MLflow UI: `mlflow ui --backend-store-uri {uri}`, then "
                     "http://127.0.0.1:5000")
    elif uri:
        hints.append(f"MLflow UI: {uri}")
    return hints + [prefect_ui_hint(load_settings())]


def base_model(state, console) -> None:
    """Build the config's embedded base (or reuse this home's copy or the cached build)."""
    from flows.stages import base_model_dir
    from hat_core.basemodel import read_manifest

    c = state.config
    out = state.home / "models" / f"base-{c.base_size}-seed{c.base_seed}"
    had, cached = out.is_dir(), _cached(c.base_size, c.base_seed)
    start = time.perf_counter()
    path = base_model_dir(c.base_model, c.base_size, c.base_seed, state.home, cache_root())
    took = time.perf_counter() - start
    manifest = read_manifest(path) or {}
    how = ("a model directory from the config" if c.base_model else
           "already in this home" if had else
           "copied from the cache" if cached else "built now, and cached")
    training = manifest.get("training", {})
    console.print(f"base model ({how}, {took:.1f} s): {path}")
    if manifest:
        console.print(f"size {manifest.get('size')}: {manifest.get('parameters', 0):,} "
                      f"parameters, {training.get('steps')} pre-training steps, final loss "
                      f"{training.get('final_loss', float('nan')):.3f}; probe "
                      f"{_probe_line(manifest.get('probe') or {})}")
    state.artefacts["base model"] = str(path)
    if not c.base_model:
        state.artefacts["base model cache"] = str(cache_root() / "base-models")


def _cached(size: str, seed: int) -> bool:
    from hat_core.basemodel import get_size, read_manifest
    from hat_core.basemodel.build import cache_entry

    entry = cache_entry(cache_root() / "base-models", get_size(size), seed)
    return read_manifest(entry) is not None


def _probe_line(probe: dict) -> str:
    shown = ("tool_call_wellformed", "tool_name_correct", "instruction_followed")
    parts = [f"{k} {probe[k]:.0%}" for k in shown if isinstance(probe.get(k), int | float)]
    return ", ".join(parts) or "not recorded"


def submit(state, console, name: str) -> None:
    """Store example week `name` as the next version of its line (idempotent)."""
    from db.engine import in_transaction
    from db.harness_repo import submit_harness

    h = state.harnesses[name]
    version = in_transaction(state.sessions(), lambda s: submit_harness(
        s, harness=h, author="demo", note=f"example week {name}"))
    state.versions[name] = version
    console.print(f"{name} -> {version.line} version {version.number} "
                  f"(hash {version.content_hash[:12]})")


def run_retrain(state, console, name: str) -> JobOutcome:
    """The `retrain` flow for stored week `name`, with live stage progress; the verdicts."""
    from flows.retrain import retrain

    version = state.versions[name]
    console.print(f"retrain flow for {version.line} v{version.number}, trigger {TRIGGER}, "
                  f"config {state.config_path}")
    with StageWatcher(state.sessions(), version_id=version.id, trigger=TRIGGER,
                      console=console):
        result = retrain(harness_version=version.number, line=version.line, trigger=TRIGGER,
                         config_path=str(state.config_path))
    if result.get("outcome") == "already-handled":
        console.print(f"job {result['job_key']} was already handled ({result['state']}); "
                      "its results:")
    outcome = read_outcome(state, version)
    state.outcomes[name] = outcome
    show_outcome(state, console, outcome)
    return outcome


def read_outcome(state, version) -> JobOutcome:
    """The job of `version` as the store and MLflow record it."""
    from db.flow_repo import find_model_version_for_job
    from db.jobs_repo import list_stage_runs
    from flows.retrain import job_key

    job = find_job(state.sessions(), version_id=version.id, trigger=TRIGGER)
    with state.sessions()() as s:
        stages = list_stage_runs(s, job_id=job.id)
        model = find_model_version_for_job(s, job_id=job.id,
                                           registry_name=state.config.registry_name)
    zero = next((r for r in stages if r.stage == "zero_shot"), None)
    verdict = _json_artifact(state.tracking, zero.mlflow_run_id, "zero_shot.json") if zero \
        else None
    work = state.home / "runs" / job_key(version.line, version.number, TRIGGER)
    return JobOutcome(job, stages, model, verdict, work)


def _json_artifact(tracking, run_id: str, name: str) -> dict | None:
    from mlflow.exceptions import MlflowException

    with tempfile.TemporaryDirectory() as tmp:
        try:
            path = tracking.client.download_artifacts(run_id, name, tmp)
        except (MlflowException, OSError):
            return None
        return json.loads(Path(path).read_text(encoding="utf-8"))


def show_outcome(state, console, outcome: JobOutcome) -> None:
    """Zero-shot verdict, gate table, challenger (or the failed gates), MLflow run ids."""
    job = outcome.job
    console.print(f"job {job.id} ({job.trigger}): [bold]{job.state}[/] - {job.reason}")
    if outcome.zero_shot:
        console.print(f"zero-shot check: {outcome.zero_shot.get('reason', '?')}")
        gate_table(console, "zero-shot check (champion on the new harness vs its reference)",
                    outcome.zero_shot.get("verdict", {}))
    if outcome.model is None and job.state == "succeeded":
        console.print("no new candidate: the champion stays, and no challenger is named")
    if outcome.model is not None:
        gates = outcome.model.gate_results
        gate_table(console, f"gates of {outcome.model.registry_name} "
                             f"v{outcome.model.version}", gates)
        held = [g.name for g in gates_of(gates) if not g.passed]
        verdict = gates_verdict(gates)
        if verdict == "passed":
            console.print(f"challenger: {outcome.model.registry_name} v{outcome.model.version}")
        elif verdict == "inconclusive":
            console.print(f"candidate inconclusive on gates: {', '.join(held)} (too little "
                          "evidence either way: not the challenger; promoting it needs an "
                          "admin override with a reason)")
        else:
            console.print(f"candidate failed gates: {', '.join(held)}")
    uri = state.tracking.tracking_uri
    parent = outcome.model.mlflow_run_id if outcome.model else _parent_run(state, outcome)
    console.print(f"MLflow ({uri}): parent run {parent}", soft_wrap=True)
    console.print("  stage runs: " + ", ".join(f"{r.stage} {r.mlflow_run_id}"
                                               for r in outcome.stages), soft_wrap=True)


def _parent_run(state, outcome: JobOutcome) -> str:
    stage = next((r for r in outcome.stages if r.mlflow_run_id), None)
    if stage is None:
        return "none"
    run = state.tracking.client.get_run(stage.mlflow_run_id)
    return run.data.tags.get("mlflow.parentRunId", "none")


def gate_table(console, title: str, results: dict) -> None:
    gates = results.get("gates", {})
    if not gates:
        return
    table = Table(title=title)
    for column in ("gate", "verdict", "value", "compared with", "reason"):
        table.add_column(column)
    for g in gates_of(results):
        raw = gates[g.name]
        shown = {"passed": "passed", "failed": "[red]FAILED[/]"}.get(g.verdict,
                                                                     "[yellow]inconclusive[/]")
        table.add_row(g.name, shown, _fmt(raw.get("value")), _fmt(raw.get("threshold")),
                      str(raw.get("reason", "")))
    console.print(table)


def _fmt(value) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def promote_champion(state, console) -> None:
    """Make the v1 candidate the champion of slot `ab` (`db.promotion.promote_slot`):
    the operator when its gates passed, else the admin with a stated override reason."""
    from db.promotion import promote_slot

    model = state.outcomes["v1"].model
    passed = bool(model.gate_results.get("passed"))
    actor = "operator" if passed else "admin"
    reason = "" if passed else ("demo: the first champion; its gates compared it with the "
                                "untrained base model only")
    done = promote_slot(state.sessions(), state.tracking,
                           registry_name=state.config.registry_name, version=model.version,
                           actor=actor, slot="ab", override_reason=reason)
    what = "promoted" if done.changed else "already the champion:"
    console.print(f"{what} {model.registry_name} v{done.version} -> alias champion, slot ab "
                  f"(by {actor}{', override: ' + reason if reason else ''})")


def show_registry(state, console) -> None:
    """Every registered version with its aliases, job and gate verdict."""
    client = state.tracking.client
    name = state.config.registry_name
    aliases: dict[str, list[str]] = {}
    for alias, version in client.get_registered_model(name).aliases.items():
        aliases.setdefault(str(version), []).append(alias)
    table = Table(title=f"MLflow model registry: {name}")
    for column in ("version", "aliases", "job", "gates", "source run"):
        table.add_column(column)
    versions = client.search_model_versions(f"name = '{name}'")
    for mv in sorted(versions, key=lambda m: int(m.version)):
        table.add_row(str(mv.version), ", ".join(sorted(aliases.get(str(mv.version), []))) or "-",
                      mv.tags.get("hat.job_key", "?"), mv.tags.get("hat.gates_verdict", "?"),
                      mv.run_id)
    console.print(table)
