"""The retrain flow end to end on the real Prefect engine, MLflow store and SQL store, with
the `test`-size base model (tests/flows/retrain_test.yaml): every stage runs for real.
Slow (minutes on 2 cores): marked `slow`, CI runs them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from flow_helpers import add_role, submit_variant

from db.badcases_repo import BadCaseFilter, count_bad_cases
from db.flow_repo import find_model_version_for_job
from db.jobs_repo import get_job, list_stage_runs
from db.promotion import promote_slot
from db.release_repo import list_eval_results
from flows.retrain import HANDLED, retrain
from flows.tracking import CHALLENGER, JOB_KEY, Tracking
from hat_core.evaluation.badcases import read_bad_cases

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
TEST_CONFIG = Path(__file__).with_name("retrain_test.yaml")
STAGES = ["zero_shot", "data", "sft", "opd", "rl", "eval"]


def job_config(tmp: Path, registry_name: str, **changes) -> str:
    data = yaml.safe_load(TEST_CONFIG.read_text()) | {"registry_name": registry_name}
    data["gates"] = str(ROOT / "examples" / "configs" / "gates.yaml")
    for key, value in changes.items():
        if isinstance(value, dict):
            data[key] = {**data.get(key, {}), **value}
        else:
            data[key] = value
    path = tmp / "retrain.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def versions_of(mlflow_uri: str, registry_name: str) -> list:
    return Tracking(mlflow_uri).client.search_model_versions(f"name = '{registry_name}'")


def test_the_whole_pipeline_end_to_end(prefect_harness, store, hat_env, mlflow_uri, tmp_path,
                                       registry_name):
    version = submit_variant(store, 1)
    config = job_config(tmp_path, registry_name)
    result = retrain(harness_version=version.number, config_path=config)
    assert result["outcome"] == "started" and result["retrained"] is True
    gates = result["gates"]
    assert set(gates["gates"]) == {"t1", "t2", "ife_p", "bad_case_rate", "latency"}
    assert all(g["value"] is not None for g in gates["gates"].values())   # all measured
    # two cases a suite are far fewer than min_cases: every paired gate is inconclusive
    paired = {k: g for k, g in gates["gates"].items() if k != "latency"}
    assert {g["verdict"] for g in paired.values()} == {"inconclusive"}
    assert all("too few cases: 2 < min_cases 30" in g["reason"] for g in paired.values())
    verdict = "inconclusive" if gates["gates"]["latency"]["passed"] else "failed"
    assert gates["verdict"] == verdict and gates["passed"] is False
    assert ("is inconclusive on its gates" in result["verdict"]) == (verdict == "inconclusive")
    with store() as s:
        job = get_job(s, job_id=result["job_id"])
        stages = [r.stage for r in list_stage_runs(s, job_id=job.id)]
        stored = find_model_version_for_job(s, job_id=job.id, registry_name=registry_name)
        results = list_eval_results(s, model_version_id=stored.id)
        evals = {(r.suite, r.metric) for r in results}
        queued = count_bad_cases(s, where=BadCaseFilter(model_version_id=stored.id))
    assert job.state == "succeeded" and job.reason.startswith("retrained: version 1")
    assert stages == STAGES
    assert stored.version == "1" and stored.gate_results == gates
    assert {("t1", "accuracy"), ("t2", "accuracy"), ("ifeval", "ife_p")} <= evals
    # every result points at the candidate's per-case rows, and the URI resolves
    (cases_uri,) = {r.cases_uri for r in results}
    import mlflow.artifacts

    local = mlflow.artifacts.download_artifacts(artifact_uri=cases_uri, dst_path=str(tmp_path),
                                                tracking_uri=mlflow_uri)
    rows = [json.loads(x) for x in Path(local).read_text().splitlines()]
    assert {"t1", "t2"} <= {r["suite"] for r in rows}
    work = hat_env / "runs" / result["job_key"] / "eval"
    assert queued == len(read_bad_cases(work / "candidate.badcases.jsonl"))
    # the first job's reference (the base) is the model its zero-shot check played: those
    # suites are taken from that report, IFEval alone is played again
    reference = json.loads((work / "champion.json").read_text(encoding="utf-8"))
    zero_report = work.parent / "zero_shot" / "report.json"
    reused = {s["suite"]: s["summary"].get("reused_from") for s in reference["suites"]}
    assert reused == {"t1": str(zero_report), "t2": str(zero_report), "ifeval": None}
    challenger = Tracking(mlflow_uri).alias_version(registry_name, CHALLENGER)
    assert challenger == ("1" if gates["passed"] else None)
    (mv,) = versions_of(mlflow_uri, registry_name)
    assert mv.tags[JOB_KEY] == result["job_key"]
    assert mv.tags["hat.gates_verdict"] == verdict
    client = Tracking(mlflow_uri).client
    parent = client.get_run(mv.run_id)
    assert parent.data.tags["hat.harness_version"] == str(version.number)
    assert parent.info.status == "FINISHED"
    children = client.search_runs([parent.info.experiment_id],
                                  f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'")
    assert {r.data.tags.get("hat.stage") for r in children} >= set(STAGES)
    (eval_run,) = [r for r in children if r.data.tags.get("hat.stage") == "eval"]
    assert eval_run.data.tags["hat.gates_verdict"] == verdict
    assert (eval_run.data.tags["hat.eval_render_profile"],
            eval_run.data.tags["hat.eval_decoding"]) == ("full", "free")
    again = retrain(harness_version=version.number, config_path=config)
    assert again["outcome"] == HANDLED and again["state"] == "succeeded"
    assert len(versions_of(mlflow_uri, registry_name)) == 1
    # the candidate becomes the champion (an admin's override: its gates were inconclusive);
    # the next version is checked zero-shot, its cases paired with the champion's own (read
    # back from MLflow). The untrained test model scores the same on both: inconclusive, so
    # the service retrains
    add_role(store, "ada", "admin")
    promote_slot(store, Tracking(mlflow_uri), registry_name=registry_name, version="1",
                    actor="ada", override_reason="" if gates["passed"] else "test")
    second = submit_variant(store, 2)
    checked = retrain(harness_version=second.number, config_path=config)
    assert checked["retrained"] is True
    with store() as s:
        runs = list_stage_runs(s, job_id=checked["job_id"])
    assert [r.stage for r in runs] == STAGES
    # the store row keeps the numbers; the verdict and its reason are the run's JSON artifact
    zero_json = mlflow.artifacts.download_artifacts(
        run_id=runs[0].mlflow_run_id, artifact_path="zero_shot.json",
        dst_path=str(tmp_path / "zero_shot"), tracking_uri=mlflow_uri)
    zero = json.loads(Path(zero_json).read_text(encoding="utf-8"))
    assert zero["reason"].startswith("zero-shot inconclusive (")
    assert zero["reason"].endswith("): retrain needed")
    t1 = zero["verdict"]["gates"]["t1"]
    assert t1["verdict"] == "inconclusive" and t1["evidence"]["n"] == 2   # paired, 2 cases
    zero_run = client.get_run(runs[0].mlflow_run_id)
    assert zero_run.data.tags["hat.zero_shot_verdict"] == "inconclusive"
    assert len(versions_of(mlflow_uri, registry_name)) == 2


def test_sigkill_during_sft_resumes_after_the_last_finished_stage(
        prefect_harness, store, hat_env, mlflow_uri, tmp_path, registry_name):
    from prefect.settings import PREFECT_API_URL

    version = submit_variant(store, 1)
    # a 6 s lease was lost by the in-process takeover itself on a busy machine (its heartbeat
    # then interrupts the test process): 20 s leaves room, at 14 s more of waiting
    config = job_config(tmp_path, registry_name, job_lease_s=20,
                        sft={"max_steps": 6, "save_steps": 2})
    code = ("import sys; from flows.retrain import retrain; "
            "retrain(harness_version=int(sys.argv[1]), config_path=sys.argv[2])")
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}
    proc = subprocess.Popen([sys.executable, "-c", code, str(version.number), config], cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    work = hat_env / "runs" / f"harness-{version.line}-{version.number}"
    try:
        wait_for(lambda: any((work / "sft" / "checkpoints").glob("checkpoint-*")), proc, 400)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert not (work / "sft" / "hat_stage.json").exists()          # SFT did not finish
    manifest = work / "data" / "manifest.json"
    built_at = manifest.stat().st_mtime
    time.sleep(21)                                                 # the dead owner's lease ends
    result = retrain(harness_version=version.number, config_path=config)
    assert result["outcome"] == "taken-over" and result["retrained"] is True
    assert manifest.stat().st_mtime == built_at                    # the data stage was cached
    with store() as s:
        job = get_job(s, job_id=result["job_id"])
        stages = [r.stage for r in list_stage_runs(s, job_id=job.id)]
    assert job.state == "succeeded" and job.attempts == 2
    assert stages == STAGES                                        # each stage recorded once
    assert len(versions_of(mlflow_uri, registry_name)) == 1        # registered once


def wait_for(condition, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if proc.poll() is not None:
            raise AssertionError(f"the flow process ended early with {proc.returncode}")
        time.sleep(0.2)
    raise AssertionError("timed out waiting for the flow to reach SFT")


@pytest.mark.timeout(2400)  # two whole retrains: a loaded 2-core machine took 15 min for one
def test_a_week_that_adds_a_skill_is_judged_on_what_is_new(prefect_harness, store, hat_env,
                                                            mlflow_uri, tmp_path,
                                                            registry_name):
    """v2 -> v3 adds `bundle` (tool bundle.offers, skill bundle_deals): the champion trained
    on v2 is checked zero-shot on v3 with the `new` suite too, and its 0 of 2 new cases put
    the Wilson upper bound below the floor: failed, retrain; the candidate's gates include
    `new`, paired with the champion on the same new cases."""
    from db.engine import in_transaction
    from db.harness_repo import submit_harness
    from hat_core.harness.io import load_harness

    def submit(week: str):
        harness = load_harness(ROOT / "examples" / "harnesses" / f"{week}.yaml")
        return in_transaction(store, lambda s: submit_harness(s, harness=harness, author="ann"))

    # two whole retrains back to back: a lease long enough for a loaded machine
    config = job_config(tmp_path, registry_name, eval={"new_cases": 2}, job_lease_s=300)
    first = retrain(harness_version=submit("v2").number, config_path=config)
    assert "new" not in first["gates"]["gates"]                     # nothing new: no check
    add_role(store, "ada", "admin")
    promote_slot(store, Tracking(mlflow_uri), registry_name=registry_name, version="1",
                 actor="ada", override_reason="test")
    result = retrain(harness_version=submit("v3").number, config_path=config)
    assert result["retrained"] is True
    new = result["gates"]["gates"]["new"]
    assert new["evidence"]["n"] == 2 and new["verdict"] == "inconclusive"   # 2 < min_cases
    with store() as s:
        runs = list_stage_runs(s, job_id=result["job_id"])
    import mlflow.artifacts

    zero_json = mlflow.artifacts.download_artifacts(
        run_id=runs[0].mlflow_run_id, artifact_path="zero_shot.json",
        dst_path=str(tmp_path / "zero_shot"), tracking_uri=mlflow_uri)
    zero = json.loads(Path(zero_json).read_text(encoding="utf-8"))
    assert zero["new_kinds"] == ["bundle"]
    floor = zero["verdict"]["gates"]["new_floor"]
    assert floor["verdict"] == "failed" and floor["evidence"]["n"] == 2
    assert zero["verdict"]["gates"]["t1"]["evidence"]["n"] == 2     # bundle cases left out
    assert "new_floor failed" in zero["reason"]
