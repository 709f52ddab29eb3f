"""The MLflow layout on a real SQLite MLflow store: experiment per line, one parent run per
job, one nested run per stage, one registered version per job, aliases, and the champion's
per-case rows read back for the zero-shot check."""

from __future__ import annotations

import json

from flow_helpers import registered_version

from flows.registration import champion_of
from flows.tracking import CHALLENGER, CHAMPION, JOB_KEY, STAGE, experiment_name
from hat_core.evaluation.paired import read_case_rows
from hat_core.release.gates import GateConfig, evaluate_zero_shot


def test_parent_and_stage_runs_are_found_again(tracking, tmp_path):
    tags = {"hat.harness_version": "3", "hat.trigger": "harness-change"}
    parent = tracking.parent_run("line-a", "harness-line-a-3", tags)
    assert tracking.parent_run("line-a", "harness-line-a-3", tags) == parent
    report = tmp_path / "report.json"
    report.write_text("{}")
    stage = tracking.stage_run(parent, "eval", params={"suites": {"t1": 1}},
                               metrics={"t1.accuracy": 0.5, "note": "x"},
                               artifacts={"reports": report})
    assert tracking.stage_run(parent, "eval") == stage
    run = tracking.client.get_run(stage)
    assert run.data.tags["mlflow.parentRunId"] == parent
    assert run.data.tags[STAGE] == "eval" and run.data.tags[JOB_KEY] == "harness-line-a-3"
    assert run.data.metrics == {"t1.accuracy": 0.5}
    assert run.data.params == {"suites.t1": "1"}
    assert [a.path for a in tracking.client.list_artifacts(stage)] == ["reports"]
    experiment = tracking.client.get_experiment_by_name(experiment_name("line-a"))
    assert tracking.client.get_run(parent).info.experiment_id == experiment.experiment_id


def test_register_once_per_job_and_aliases(tracking, registry_name, tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    parent = tracking.parent_run("line-b", "harness-line-b-1", {})
    version = tracking.register(parent, registry_name, model, {"hat.gates_passed": "true"})
    assert tracking.register(parent, registry_name, model, {}) == version == "1"
    assert tracking.alias_version(registry_name, CHALLENGER) is None
    tracking.set_alias(registry_name, CHALLENGER, version)
    assert tracking.aliases(registry_name) == {CHALLENGER: "1"}
    local = tracking.model_source_dir(registry_name, version)
    assert (local / "config.json").read_text() == "{}"
    tracking.delete_alias(registry_name, CHALLENGER)
    assert tracking.aliases(registry_name) == {}


def test_registration_and_stage_folders_skip_trainer_checkpoints(tracking, registry_name,
                                                                  tmp_path):
    model = tmp_path / "rl"
    (model / "checkpoints" / "checkpoint-2").mkdir(parents=True)
    (model / "checkpoints" / "checkpoint-2" / "optimizer.pt").write_bytes(b"0" * 4096)
    (model / "checkpoint-1").mkdir()
    (model / "checkpoint-1" / "scheduler.pt").write_bytes(b"0")
    (model / "reports").mkdir()
    (model / "reports" / "probe.json").write_text("{}")
    for name in ("config.json", "model.safetensors", "hat_stage.json"):
        (model / name).write_text("{}")
    parent = tracking.parent_run("line-c", "harness-line-c-1", {})
    version = tracking.register(parent, registry_name, model, {})
    local = tracking.model_source_dir(registry_name, version)
    found = sorted(str(p.relative_to(local)) for p in local.rglob("*") if p.is_file())
    assert found == ["config.json", "hat_stage.json", "model.safetensors", "reports/probe.json"]
    stage = tracking.stage_run(parent, "rl", artifacts={"model": model})
    assert sorted(a.path for a in tracking.client.list_artifacts(stage, "model")) == [
        "model/config.json", "model/hat_stage.json", "model/model.safetensors", "model/reports"]


def test_training_stages_log_the_final_model_only(tmp_path):
    from hat_core.training.tracking import model_files

    (tmp_path / "checkpoints" / "checkpoint-4").mkdir(parents=True)
    for name in ("model.safetensors", "config.json", "hat_stage.json", "optimizer.pt",
                 "scheduler.pt", "rng_state_0.pth", "training_args.bin"):
        (tmp_path / name).write_text("x")
    assert [f.name for f in model_files(tmp_path)] == [
        "config.json", "hat_stage.json", "model.safetensors"]


def test_the_champions_cases_come_back_for_the_zero_shot_check(store, tracking, registry_name,
                                                              tmp_path):
    rows = [{"case_id": f"{suite}/c{i}", "suite": suite, "passed": False}
            for suite in ("t1", "t2") for i in range(40)]
    reports = tmp_path / "eval"
    reports.mkdir()
    (reports / "candidate.cases.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    parent = tracking.parent_run("line-d", "harness-line-d-1", {})
    eval_run = tracking.stage_run(parent, "eval", artifacts={"reports": reports})
    uri = f"runs:/{eval_run}/reports/candidate.cases.jsonl"
    version = registered_version(store, tracking, registry_name, tmp_path, 1, passed=False,
                                 cases_uri=uri)
    tracking.set_alias(registry_name, CHAMPION, version)
    champion = champion_of(tracking, store, registry_name)
    assert champion["cases_uri"] == uri
    local = tracking.download_cases(champion["cases_uri"], tmp_path / "reference")
    assert read_case_rows(local) == rows
    verdict = evaluate_zero_shot(rows, read_case_rows(local), GateConfig())
    assert verdict.verdict == "inconclusive"  # 0 against 0 on the same 40 cases
    assert verdict.checks[0].evidence["n"] == 40
    assert tracking.download_cases("", tmp_path / "none") is None
    missing = f"runs:/{eval_run}/reports/gone.cases.jsonl"
    assert tracking.download_cases(missing, tmp_path / "gone") is None
