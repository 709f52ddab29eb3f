"""The reproduction table, run: five arms trained and evaluated on one budget, per seed.

    config = load_repro_config(Path("examples/configs/repro_full.yaml"))
    results = run_repro(config, work=Path("/tmp/hat-repro"), tracking_uri="sqlite:///m.db")
    write_outputs(results, Path("docs/results"))          # hat_core.repro.report

Per seed, with the project's own pieces and nothing else:
1. base: the config's `base_model` directory, else `hat_core.basemodel.build_base_model(size,
   seed)` (cached), the "Base" arm;
2. two data builds on the harness (`hat_core.data.build`): HSA (`stage_files.data`) and
   Fixed-Harness (`stage_files.data_fixed`, else the same with `variants: 0`), same seed;
3. Fixed-Harness SFT and HSA-SFT: `run_sft` from the base, same steps and batch;
4. HSA-SFT -> `run_opd` (teacher: the base; the HSA build's general prompts) -> `run_rl`
   (GDPO in the simulator); the OPD output is the "HSA-SFT + OPD" arm, the checkpoint
   HAT's RL starts from (no training of its own), the RL output the "HAT" arm;
5. every arm: `evaluate` on the seed's own eval world (`ReproConfig.eval_seed_of`: T1, T2,
   robustness, CoT length), T2 on the operator's own edit (`t2_edit`: T1's scenarios under
   the first of `edits`, v2), IFE-P on the project's IFEval set (every prompt unless
   `eval.ifeval_prompts` caps it) and the bad-case rate on each edited harness (v2..v4).
Everything runs under the config's render profile. Every played case is kept as a row in
`<work>/seed<N>/eval/<arm>[.t2_edit|.ifeval|.edits].cases.jsonl`; the results keep, per
arm, the failure types behind each cell (`failure_table`), every paired suite's per-case outcomes
(`hat_core.repro.outcomes`: the paired tests and pooled intervals of the report) and the
counts per scenario kind, T2 variant and IFEval instruction family. Stage runs, evaluation
reports (with their case rows) and a parent run per seed (with the edit case rows) go to
MLflow when `tracking_uri` is given. Numbers come only from the played cases; nothing is
filled in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hat_core.repro.config import ARMS, ReproConfig

Log = Callable[[str], None]
SIM = ("t1", "t2", "tool_robustness", "prompt_robustness", "cot_length")


def run_repro(config: ReproConfig, work: Path, *, cache_dir: Path | None = None,
              tracking_uri: str | None = None, log: Log | None = None) -> dict:
    """Train and evaluate every arm for every seed; the results document (JSON-able)."""
    import torch

    from hat_core.harness.render import use_profile

    torch.set_num_threads(config.threads)
    say = log or (lambda line: None)
    results: dict[str, Any] = {"config": config.to_dict(), "seeds": {}}
    started = time.perf_counter()
    with use_profile(config.render_profile):
        for seed in config.seeds:
            results["seeds"][str(seed)] = run_seed(config, seed, Path(work) / f"seed{seed}",
                                                   cache_dir=cache_dir,
                                                   tracking_uri=tracking_uri, log=say)
    results["wall_seconds"] = round(time.perf_counter() - started, 1)
    return results


def run_seed(config: ReproConfig, seed: int, work: Path, *, cache_dir: Path | None,
             tracking_uri: str | None, log: Log) -> dict:
    """One seed: the base, two data builds, the trained arms, the evaluation of all five on
    the seed's eval world."""
    timer = _Timer(log, seed)
    parent = _parent_run(tracking_uri, config, seed, Path(work).parent / "mlartifacts")
    with timer("base"):
        base = _base(config, seed, work, cache_dir)
    with timer("data"):
        data = {name: _data(config, seed, work / f"data-{name}", fixed=name == "fixed")
                for name in ("fixed", "hsa")}
    stages: dict[str, Any] = {}
    models = {"base": base}
    for arm, stage, src, extra in _plan(config, data):
        with timer(arm):
            result = _stage(config, stage, seed, models[src], work / arm, extra, base,
                            tracking_uri, parent)
        models[arm] = result.output_dir
        stages[arm] = {"stage": stage, "steps": result.steps, "history": result.history,
                       "metrics": result.metrics, "run_id": result.run_id}
    arm_models = {"base": base, "fixed_sft": models["fixed_sft"], "hsa_sft": models["hsa_sft"],
                  "hsa_opd": models["hat_opd"], "hat": models["hat_rl"]}
    eval_seed = config.eval_seed_of(seed)
    evals = {}
    for arm in ARMS:
        with timer(f"eval {arm}"):
            evals[arm] = evaluate_arm(config, arm_models[arm], arm, eval_seed, tracking_uri,
                                      parent, work / "eval")
    _close_parent(tracking_uri, parent, work / "eval")
    return {"eval_seed": eval_seed, "models": {k: str(v) for k, v in arm_models.items()},
            "data": {k: v for k, v in data.items()}, "stages": stages, "eval": evals,
            "timings": timer.seconds, "mlflow_parent_run": parent}


def dotted(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted keys (`{"probe": {"enabled": False}}` -> `probe.enabled`),
    so an override changes one key of a section, not the whole section."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            out |= dotted(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def _plan(config: ReproConfig, data: dict) -> list[tuple[str, str, str, dict]]:
    """(arm dir, stage, input model, stage-specific overrides) in order."""
    return [("fixed_sft", "sft", "base", {"dataset": data["fixed"]["path"]}),
            ("hsa_sft", "sft", "base", {"dataset": data["hsa"]["path"]}),
            ("hat_opd", "opd", "hsa_sft", {"prompts": data["hsa"]["path"]}),
            ("hat_rl", "rl", "hat_opd", {"harness": config.harness})]


class _Timer:
    def __init__(self, log: Log, seed: int):
        self.log, self.seed, self.seconds = log, seed, {}

    def __call__(self, name: str):
        timer = self

        class _Block:
            def __enter__(self):
                self.start = time.perf_counter()
                timer.log(f"seed {timer.seed}: {name} ...")

            def __exit__(self, *exc):
                took = round(time.perf_counter() - self.start, 1)
                timer.seconds[name] = took
                timer.log(f"seed {timer.seed}: {name} done in {took:.0f} s")
        return _Block()


def _base(config: ReproConfig, seed: int, work: Path, cache_dir: Path | None) -> Path:
    from hat_core.basemodel import build_base_model

    if config.base_model is not None:
        return Path(config.base_model)
    base_seed = seed if config.base_seed is None else config.base_seed
    return build_base_model(work / "base", size=config.base_size, seed=base_seed,
                            cache_dir=cache_dir).path


def _data(config: ReproConfig, seed: int, out: Path, *, fixed: bool) -> dict:
    """The HSA build, or (`fixed`) the Fixed-Harness one: the original harness only."""
    from hat_core.data.build import build
    from hat_core.harness.io import load_harness

    data_config = data_config_of(config, seed, fixed=fixed)
    result = build(load_harness(config.harness), data_config, out)
    return {"path": str(out), "version": result.version, "splits": dict(result.stats.splits),
            "variants": data_config.variants}


def data_config_of(config: ReproConfig, seed: int, *, fixed: bool):
    """The typed data config of a seed's HSA build, or (`fixed`) its Fixed-Harness build
    (`stage_files.data_fixed`, else the HSA file; `variants: 0` either way)."""
    from hat_core.data.config import load_data_config

    files = config.stage_files
    name = files.data_fixed if fixed and files.data_fixed else files.data
    overrides = {**dotted(config.data), "seed": seed, "render_profile": config.render_profile}
    if fixed:
        overrides["variants"] = 0
    return load_data_config(Path(config.stage_configs) / name, overrides)


def stage_config_of(config: ReproConfig, stage: str, seed: int, src: Path, out: Path,
                    extra: dict, base: Path):
    """The typed config of one training stage: its stage file, the repro's overrides, then
    the run's own inputs (`src` model, `out`, seed, threads, profile; OPD's teacher `base`)."""
    from hat_core.training import load_stage_config

    overrides = {**dotted(getattr(config, stage)), **extra, "base": str(src),
                 "output_dir": str(out),
                 "seed": seed, "num_threads": config.threads,
                 "render_profile": config.render_profile}
    if stage == "opd":
        overrides["teacher"] = str(base)
    return load_stage_config(
        stage, Path(config.stage_configs) / getattr(config.stage_files, stage), overrides)


def _stage(config: ReproConfig, stage: str, seed: int, src: Path, out: Path, extra: dict,
           base: Path, tracking_uri: str | None, parent: str | None):
    from hat_core.training import run_stage_named

    stage_config = stage_config_of(config, stage, seed, src, out, extra, base)
    return run_stage_named(stage, stage_config, tracking=_stage_tracking(
        tracking_uri, stage, out.name, parent))


def evaluate_arm(config: ReproConfig, model_dir: Path, arm: str, eval_seed: int,
                 tracking_uri: str | None, parent: str | None, out_dir: Path) -> dict:
    """`evaluate_policy` of the model in `model_dir`, greedy (see there)."""
    from hat_core.evaluation.policy import BackendPolicy
    from hat_core.inference.backends import TransformersBackend

    policy = BackendPolicy(TransformersBackend(model_dir), max_tokens=config.eval.max_tokens)
    return evaluate_policy(config, policy, arm, eval_seed, out_dir,
                           tracking_uri=tracking_uri, parent=parent)


def evaluate_policy(config: ReproConfig, policy, arm: str, eval_seed: int, out_dir: Path, *,
                    tracking_uri: str | None = None, parent: str | None = None) -> dict:
    """One arm on eval world `eval_seed`: its suite metrics (`suite.metric`), its bad-case
    counts on each edit, the failure types behind them (`failure_table`), the paired suites'
    per-case outcomes and the family counts (`hat_core.repro.outcomes`), and the files of
    its case rows under `out_dir`. `ifeval` needs a language model behind `policy`."""
    from hat_core.evaluation.evaluate import EvalOptions, case_rows, evaluate, flat_metrics
    from hat_core.harness.io import load_harness
    from hat_core.repro.outcomes import case_outcomes, family_counts

    budget = config.eval
    harness = load_harness(config.harness)
    metrics: dict[str, float] = {}
    rows: list[dict] = []
    files: list[Path] = []
    runs = []
    sim = [s for s in budget.suites if s in SIM]
    if sim:
        runs.append((arm, evaluate(policy, harness, sim, EvalOptions(
            episodes=budget.episodes, variants=budget.variants,
            robustness_variants=budget.robustness_variants, seed=eval_seed,
            max_tokens=budget.max_tokens), model_name=arm)))
    if "t2_edit" in budget.suites:
        runs.append((f"{arm}.t2_edit", edit_t2(config, policy, eval_seed, arm)))
    if "ifeval" in budget.suites:
        runs.append((f"{arm}.ifeval", evaluate(policy, harness, ["ifeval"], EvalOptions(
            limit=budget.ifeval_prompts, max_tokens=budget.max_tokens, seed=eval_seed),
            model_name=arm)))
    for name, report in runs:
        metrics |= flat_metrics(report)
        rows += case_rows(report)
        files.append(_write_rows(out_dir / f"{name}.cases.jsonl", case_rows(report)))
        _log_report(report, tracking_uri, parent, name.replace(".", " "), files[-1])
    edits, edit_rows = edit_bad_cases(config, policy, eval_seed)
    if edit_rows:
        files.append(_write_rows(out_dir / f"{arm}.edits.cases.jsonl", edit_rows))
    return {"eval_seed": eval_seed, "metrics": metrics, "edits": edits,
            "failures": failure_table(rows + edit_rows),
            "right_tool": right_tool_counts(rows + edit_rows),
            "outcomes": case_outcomes(rows), "families": family_counts(rows),
            "cases": [str(f) for f in files]}


def edit_t2(config: ReproConfig, policy, eval_seed: int, arm: str):
    """T2 on the operator's own edit (`t2_edit`): T1's scenarios of eval world `eval_seed`
    played under the first of `config.edits` (v2, the rename week) as the operator wrote it,
    judged like T2; an `EvalReport` with one suite, group the edit's name."""
    from hat_core.evaluation.cases import eval_world, original_surface, play_cases
    from hat_core.evaluation.report import EvalReport
    from hat_core.evaluation.suites.qa import qa_result
    from hat_core.harness.io import load_harness

    path = Path(config.edits[0])
    edited = load_harness(path)
    catalog, scenarios = eval_world(eval_seed, config.eval.episodes)
    played = play_cases("t2_edit", [original_surface(edited)], scenarios, catalog, policy,
                        group=path.stem)
    result = qa_result("t2_edit", played, summary={"seed": eval_seed, "world": "hat-eval",
                                                   "edit": path.stem})
    return EvalReport(arm, edited.content_hash(), (result,))


def edit_bad_cases(config: ReproConfig, policy, eval_seed: int
                   ) -> tuple[dict[str, dict], list[dict]]:
    """Bad cases of `policy` under each edited harness (held-out scenarios of eval world
    `eval_seed`, rule judge): the counts per edit, and every played case as a row (suite
    `edit`, group the edit's name)."""
    from hat_core.evaluation.cases import eval_world, original_surface, play_cases
    from hat_core.harness.io import load_harness

    catalog, scenarios = eval_world(eval_seed, config.eval.edit_episodes)
    out, rows = {}, []
    for path in config.edits:
        played = play_cases("edit", [original_surface(load_harness(path))], scenarios, catalog,
                            policy, group=Path(path).stem)
        out[Path(path).stem] = {"bad": sum(not o.verdict.passed for o in played),
                                "cases": len(played)}
        rows += [o.row() for o in played]
    return out, rows


def failure_table(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Why cases failed, per suite (edits per edit, `edit:v2`): a failed simulator case counts
    its verdict's failure type (`error` when it has none); an IFEval prompt that failed the
    strict check counts each instruction it broke."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        suite = f"edit:{row['group']}" if row["suite"] == "edit" else row["suite"]
        if "strict_instructions" in row:
            broken = [i for i, ok in zip(row["instruction_id_list"],
                                         row["strict_instructions"], strict=True) if not ok]
        elif "passed" in row:
            broken = [] if row["passed"] else [row.get("failure_type") or "error"]
        else:
            continue
        for key in broken:
            counts = out.setdefault(suite, {})
            counts[key] = counts.get(key, 0) + 1
    return {suite: dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
            for suite, c in out.items()}


def right_tool_counts(rows: list[dict]) -> dict[str, list[int]]:
    """`{suite: [cases with the right tools, cases]}` over the simulator rows (edits per edit,
    `edit:v2`): a case has the right tools when its verdict lists no `wrong_tool`, whatever
    else failed. It separates "called the wrong name" from "right call, bad arguments or
    reply", which a pass rate near 0 hides."""
    out: dict[str, list[int]] = {}
    for row in rows:
        if "failures" not in row:
            continue
        suite = f"edit:{row['group']}" if row["suite"] == "edit" else row["suite"]
        counts = out.setdefault(suite, [0, 0])
        counts[0] += "wrong_tool" not in row["failures"]
        counts[1] += 1
    return out


def _write_rows(path: Path, rows: list[dict]) -> Path:
    from hat_core.evaluation.jsonl import write_jsonl

    path.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(path, rows)
    return path


def _parent_run(uri: str | None, config: ReproConfig, seed: int,
                artifacts: Path) -> str | None:
    """The seed's parent run. A new `hat-repro` experiment in a local store (SQLite, files)
    keeps its artifacts in `artifacts` (beside the seeds' work dirs), not in `./mlruns` of
    whatever directory the command ran from."""
    if not uri:
        return None
    from mlflow.entities import Param
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name("hat-repro")
    local = not uri.startswith(("http://", "https://", "databricks"))
    exp = found.experiment_id if found else client.create_experiment(
        "hat-repro", artifact_location=Path(artifacts).resolve().as_uri() if local else None)
    run = client.create_run(exp, run_name=f"repro seed {seed}",
                            tags={"hat.kind": "repro", "hat.seed": str(seed)})
    client.log_batch(run.info.run_id, params=[
        Param("base_size", config.base_size), Param("seed", str(seed)),
        Param("render_profile", config.render_profile)])
    client.log_dict(run.info.run_id, config.to_dict(), "repro_config.json")
    return run.info.run_id


def _close_parent(uri: str | None, run_id: str | None, cases: Path) -> None:
    """Attach the seed's edit case rows (`cases/*.edits.cases.jsonl`) and end the run."""
    if uri and run_id:
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=uri)
        for path in sorted(Path(cases).glob("*.edits.cases.jsonl")):
            client.log_artifact(run_id, str(path), "cases")
        client.set_terminated(run_id)


def _stage_tracking(uri: str | None, stage: str, name: str, parent: str | None):
    if not uri:
        return None
    from hat_core.training.tracking import StageTracking

    return StageTracking(uri, "hat-repro", stage, run_name=name, parent_run_id=parent)


def _log_report(report, uri: str | None, parent: str | None, name: str, cases: Path) -> None:
    """The evaluation run, with its case rows at the run's root (`hat pairwise create
    --from-runs` reads them there)."""
    if uri:
        from hat_core.evaluation.tracking import log_report

        log_report(report, uri=uri, experiment="hat-repro", run_name=f"eval {name}",
                   parent_run_id=parent, artifacts=[cases])
