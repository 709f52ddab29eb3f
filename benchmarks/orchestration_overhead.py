"""What orchestration and tracking cost: the same tiny retrain pipeline through the Prefect
flow (store, MLflow parent/nested runs, registry, cached tasks) and as the stage functions
called directly (no Prefect, no MLflow, no store), side by side.

    .venv/bin/python benchmarks/orchestration_overhead.py [--config tests/flows/retrain_test.yaml]

Both paths start from the same prepared state: the base model built, the MLflow store and the
Prefect API warmed (their one-time start-up is reported apart). Each path gets a fresh home
and a fresh Prefect result folder, so nothing is reused from a cache.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def prepare(work: Path) -> None:
    """Point the settings and Prefect at a fresh home (before Prefect is imported)."""
    home = work / "home"
    os.environ.update({
        "HAT_HOME": str(home), "HAT_DATABASE_URL": f"sqlite:///{home / 'hat.db'}",
        "HAT_MLFLOW_TRACKING_URI": f"sqlite:///{home / 'mlflow.db'}",
        "PREFECT_RESULTS_LOCAL_STORAGE_PATH": str(work / "results"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
    os.environ.pop("PREFECT_API_URL", None)


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def direct(config, harness, home: Path) -> tuple[float, dict[str, float]]:
    """The stage functions in the flow's order, no orchestration and no tracking."""
    from flows import stages

    ev, times, work = config.eval, {}, home / "direct"
    base, times["base"] = timed(lambda: stages.base_model_dir(
        config.base_model, config.base_size, config.base_seed, home))
    _, times["zero_shot"] = timed(lambda: stages.evaluate_model(
        base, harness, ev.zero_shot_suites, work / "zero_shot.json", settings=ev))
    data, times["data"] = timed(lambda: stages.build_dataset(harness, None, config.data,
                                                             work / "data"))
    model = base
    inputs = {"sft": {"dataset": str(data)},
              "opd": {"teacher": str(base), "prompts": str(data / "opd")},
              "rl": {"harness": str(work / "harness.json")}}
    (work / "harness.json").write_text(harness.canonical_json(), encoding="utf-8")
    for stage in ("sft", "opd", "rl"):
        out, times[stage] = timed(lambda s=stage, m=model: stages.train_stage(
            s, getattr(config, s), base=Path(m), output_dir=work / s, inputs=inputs[s],
            tracking_uri=None))
        model = Path(out["output_dir"])
    _, times["eval"] = timed(lambda: [stages.evaluate_model(
        m, harness, ev.suites, work / f"{n}.json", settings=ev)
        for n, m in (("candidate", model), ("base", base))])
    _, times["latency"] = timed(lambda: stages.measure_latency(
        model, harness, config.latency, work / "latency.json"))
    return sum(times.values()), times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "tests" / "flows" / "retrain_test.yaml"))
    parser.add_argument("--flow-first", action="store_true", help="run the flow path first")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hat-orch-"))
    prepare(work)
    from db.engine import in_transaction, make_engine, make_session_factory
    from db.harness_repo import submit_harness
    from db.migrate import upgrade
    from flows.config import load_retrain_config
    from flows.retrain import make_tracking, retrain
    from flows.stages import base_model_dir
    from hat_core.harness.io import load_harness
    from hat_core.settings import load_settings

    home = Path(os.environ["HAT_HOME"])
    home.mkdir(parents=True)
    config = load_retrain_config(args.config)
    harness = load_harness(ROOT / "examples" / "harnesses" / "v1.yaml")
    _, setup_store = timed(lambda: upgrade(os.environ["HAT_DATABASE_URL"]))
    _, setup_mlflow = timed(lambda: make_tracking(load_settings()).client.search_experiments())
    _, setup_base = timed(lambda: base_model_dir(config.base_model, config.base_size,
                                                 config.base_seed, home))
    sessions = make_session_factory(make_engine(os.environ["HAT_DATABASE_URL"]))
    version = in_transaction(sessions, lambda s: submit_harness(s, harness=harness,
                                                                author="bench"))
    from prefect import flow

    _, setup_prefect = timed(lambda: flow(lambda: None, name="warm-up")())
    _, setup_imports = timed(warm_imports)
    print(f"one-time set-up: store {setup_store:.1f} s, MLflow store {setup_mlflow:.1f} s, "
          f"Prefect API {setup_prefect:.1f} s, base model {setup_base:.1f} s, "
          f"imports {setup_imports:.1f} s")
    def run_flow():
        return timed(lambda: retrain(harness_version=version.number, config_path=args.config,
                                     return_state=True))

    if args.flow_first:
        state, flow_wall = run_flow()
    direct_wall, stage_times = direct(config, harness, home)
    print("direct stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in stage_times.items()))
    if not args.flow_first:
        state, flow_wall = run_flow()
    inside, per_task = stage_task_seconds(state.state_details.flow_run_id)
    print("flow stage tasks: " + ", ".join(f"{k} {v:.1f} s" for k, v in per_task))
    print(f"direct: {direct_wall:.1f} s   flow: {flow_wall:.1f} s   "
          f"difference {flow_wall - direct_wall:+.1f} s "
          f"({100 * (flow_wall - direct_wall) / flow_wall:+.1f}% of the flow's wall)")
    around = flow_wall - inside
    print(f"inside the flow: stage tasks {inside:.1f} s, everything else (Prefect engine, "
          f"store, MLflow runs/artifacts/registry) {around:.1f} s = "
          f"{100 * around / flow_wall:.1f}% of the flow's wall")
    print(f"flow verdict: {state.result()['verdict']}")


STAGE_TASKS = ("base_model", "evaluate", "build_data", "train", "latency")


def warm_imports() -> None:
    """Import the heavy libraries once, so neither path pays for them."""
    import transformers  # noqa: F401
    import trl  # noqa: F401

    import hat_core.evaluation.suites.registry  # noqa: F401


def stage_task_seconds(flow_run_id) -> tuple[float, list[tuple[str, float]]]:
    """Wall seconds of the flow's stage tasks (the work both paths share), and each one."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
    each = [(r.name, (r.end_time - r.start_time).total_seconds()) for r in
            sorted(runs, key=lambda r: r.start_time or r.expected_start_time)
            if r.name.rsplit("-", 1)[0] in STAGE_TASKS and r.start_time and r.end_time]
    return sum(t for _, t in each), each


if __name__ == "__main__":
    main()
