"""`hat repro` end to end on the `toy-test` base: every arm trained and evaluated for real (seed
1, on its own eval world 1), the table, plots, results and MLflow runs well formed and
consistent with each other."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from safetensors.torch import load_file

from hat_core.repro.config import ARMS
from hat_core.repro.report import COLUMNS, arm_values, cell

pytestmark = pytest.mark.slow

HAT = str(Path(sys.executable).parent / "hat")
ROOT = Path(__file__).resolve().parents[2]
QUICK = ROOT / "examples" / "configs" / "repro_quick.yaml"
SEED = "1"
REWARDS = ("accuracy", "effectiveness", "tool_rationality", "skill_selection",
           "cot_length_penalty")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    work = tmp_path_factory.mktemp("repro")
    config = yaml.safe_load(QUICK.read_text())
    config.update(seeds=[int(SEED)], edits=["examples/harnesses/v2.yaml"])
    config["eval"] |= {"suites": ["t1", "t2", "t2_edit", "cot_length", "ifeval"],
                       "max_tokens": 8}
    path = work / "repro.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    done = subprocess.run([HAT, "repro", "--config", str(path), "--work", str(work / "w"),
                           "--cache-dir", str(work / "cache"), "--set", "sft.max_steps=2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    return work / "w", done


def test_exits_0_and_writes_every_output(run):
    work, done = run
    assert done.returncode == 0, done.stderr[-3000:]
    out = work / "results"
    for name in ("results.json", "table.md", "bars.png", "curves.png"):
        assert (out / name).stat().st_size > 0
    assert (out / "bars.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # `--set sft.max_steps=2` reached the config and the SFT stages
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["sft"]["max_steps"] == 2
    stage = json.loads((Path(results["seeds"][SEED]["models"]["hsa_sft"]) / "hat_stage.json")
                       .read_text())
    assert stage["steps"] == 2


def test_table_cells_are_computed_from_the_results(run):
    work, _ = run
    results = json.loads((work / "results" / "results.json").read_text())
    table = (work / "results" / "table.md").read_text()
    for arm, label in (("base", "Base"), ("fixed_sft", "Fixed-Harness SFT"),
                       ("hsa_sft", "HSA-SFT only"), ("hsa_opd", "HSA-SFT + OPD"),
                       ("hat", "HAT")):
        row = next(x for x in table.splitlines() if x.startswith(f"| {label}"))
        cells = [c.strip() for c in row.strip("|").split("|")[1:]]
        assert cells == [cell(arm_values(results, arm, key), scale)
                         for _, key, scale in COLUMNS]
    metrics = results["seeds"][SEED]["eval"]["hat"]["metrics"]
    assert 0.0 <= metrics["t1.pass_rate"] <= 1.0 and "ifeval.ife_p" in metrics
    assert "t2_edit.pass_rate" in metrics and "Paired tests between arms" in table
    assert "T1 per scenario kind" in table and "IFEval per instruction family" in table
    assert set(results["aggregates"]["pooled"]) == set(ARMS)


def test_the_seed_played_its_own_eval_world_and_the_opd_arm_is_rls_start(run):
    work, _ = run
    seed = json.loads((work / "results" / "results.json").read_text())["seeds"][SEED]
    assert seed["eval_seed"] == int(SEED)
    assert {seed["eval"][a]["eval_seed"] for a in ARMS} == {int(SEED)}
    assert seed["models"]["hsa_opd"].endswith("hat_opd")
    stage = json.loads((Path(seed["models"]["hat"]) / "hat_stage.json").read_text())
    assert Path(stage["config"]["base"]).resolve() == Path(seed["models"]["hsa_opd"]).resolve()


def test_arms_were_really_trained_under_the_compact_profile(run):
    work, _ = run
    seed = json.loads((work / "results" / "results.json").read_text())["seeds"][SEED]
    models = {arm: Path(p) for arm, p in seed["models"].items()}
    base = load_file(models["base"] / "model.safetensors")
    for arm in ("fixed_sft", "hsa_sft", "hat"):
        weights = load_file(models[arm] / "model.safetensors")
        assert any(not weights[k].equal(base[k]) for k in base), arm
        stage = json.loads((models[arm] / "hat_stage.json").read_text())
        assert stage["config"]["render_profile"] == "compact"
    assert seed["stages"]["fixed_sft"]["steps"] == seed["stages"]["hsa_sft"]["steps"] == 2
    history = seed["stages"]["hat_rl"]["history"]
    assert all(any(f"rewards/{r}/mean" in h for h in history) for r in REWARDS)
    data = seed["data"]
    assert data["fixed"]["variants"] == 0 and data["hsa"]["variants"] > 0
    manifest = json.loads((Path(data["hsa"]["path"]) / "manifest.json").read_text())
    assert manifest["status"] == "ready" and manifest["config"]["render_profile"] == "compact"


def test_mlflow_holds_the_stage_and_eval_runs(run):
    from mlflow.tracking import MlflowClient

    work, _ = run
    results = json.loads((work / "results" / "results.json").read_text())
    client = MlflowClient(tracking_uri=results["mlflow_uri"])
    exp = client.get_experiment_by_name("hat-repro")
    runs = client.search_runs([exp.experiment_id], max_results=100)
    names = {r.info.run_name for r in runs}
    assert {f"repro seed {SEED}", "fixed_sft", "hsa_sft", "hat_opd", "hat_rl"} <= names
    evals = {r.info.run_name: r for r in runs if r.info.run_name.startswith("eval ")}
    assert {f"eval {a}" for a in ARMS} <= set(evals)
    logged = evals["eval hsa_sft"].data.metrics["t1.pass_rate"]
    assert logged == results["seeds"][SEED]["eval"]["hsa_sft"]["metrics"]["t1.pass_rate"]


def test_artifacts_stay_in_the_work_dir(run):
    """The parent run's config lands under --work, not in ./mlruns of the caller's cwd."""
    from mlflow.tracking import MlflowClient

    work, _ = run
    results = json.loads((work / "results" / "results.json").read_text())
    client = MlflowClient(tracking_uri=results["mlflow_uri"])
    location = client.get_experiment_by_name("hat-repro").artifact_location
    assert location == (work / "mlartifacts").resolve().as_uri()
    assert list((work / "mlartifacts").rglob("repro_config.json"))


def test_every_played_case_is_kept_and_agrees_with_the_metrics(run):
    """Per-case rows on disk and in MLflow; the pass rates, the edit counts and the failure
    table are what those rows say."""
    from mlflow.tracking import MlflowClient

    from hat_core.evidence.run_cases import load_run_cases
    from hat_core.repro.run import failure_table, right_tool_counts

    work, _ = run
    results = json.loads((work / "results" / "results.json").read_text())
    arm = results["seeds"][SEED]["eval"]["fixed_sft"]
    rows = {}
    for path in map(Path, arm["cases"]):
        rows[path.name] = [json.loads(x) for x in path.read_text().splitlines()]
    assert set(rows) == {"fixed_sft.cases.jsonl", "fixed_sft.t2_edit.cases.jsonl",
                         "fixed_sft.ifeval.cases.jsonl", "fixed_sft.edits.cases.jsonl"}
    t1 = [r for r in rows["fixed_sft.cases.jsonl"] if r["suite"] == "t1"]
    assert t1 and sum(r["passed"] for r in t1) / len(t1) == arm["metrics"]["t1.pass_rate"]
    edits = rows["fixed_sft.edits.cases.jsonl"]
    assert {r["group"] for r in edits} == {"v2"}
    assert sum(not r["passed"] for r in edits) == arm["edits"]["v2"]["bad"]
    assert arm["failures"] == failure_table([r for v in rows.values() for r in v])
    assert arm["right_tool"] == right_tool_counts([r for v in rows.values() for r in v])
    assert arm["right_tool"]["t1"][1] == len(t1) and arm["right_tool"]["edit:v2"][1] == len(edits)
    client = MlflowClient(tracking_uri=results["mlflow_uri"])
    exp = client.get_experiment_by_name("hat-repro")
    runs = {r.info.run_name: r for r in client.search_runs([exp.experiment_id])}
    logged = load_run_cases(results["mlflow_uri"], runs["eval fixed_sft"].info.run_id)
    assert [r["case_id"] for r in logged.rows] == [
        r["case_id"] for r in rows["fixed_sft.cases.jsonl"]]
    parent = runs[f"repro seed {SEED}"].info.run_id
    assert {a.path for a in client.list_artifacts(parent, "cases")} == {
        f"cases/{a}.edits.cases.jsonl" for a in ARMS}
