"""`hat demo --no-ui` tells the whole story as a new user would meet it: a fresh HAT_HOME (and
so a fresh Prefect home), an empty home folder, output piped, the real SQLite store, MLflow
store and Prefect engine (its temporary local server), and it can be re-run. The `test`-size
base (built once into pytest's cache, `HAT_CACHE_DIR`) and a few steps per stage
(`demo_retrain_test.yaml`) keep it to minutes on 2 cores: marked `slow`, CI runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from db.engine import in_transaction, make_engine, make_session_factory
from db.flow_repo import find_model_version_for_job
from db.harness_repo import list_versions
from db.jobs_repo import list_jobs, list_stage_runs
from db.release_repo import current_promotion, list_model_versions
from flows.tracking import Tracking

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).with_name("demo_retrain_test.yaml")
REGISTRY = "hat-agent"
GATES = {"t1", "t2", "ife_p", "bad_case_rate", "latency"}


def run_demo(tmp: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HAT_", "PREFECT_")) and k != "COLUMNS"}
    (tmp / "user").mkdir(exist_ok=True)
    env.update(HAT_HOME=str(tmp / ".hat"), HOME=str(tmp / "user"), HAT_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]))
    command = [sys.executable, "-c", "from hat_cli.main import app; app()", "demo", "--no-ui",
               "--episodes", "15", "--config", str(CONFIG), "--summary",
               str(tmp / "summary.json")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600,
                          cwd=tmp)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done


@pytest.fixture(scope="module")
def cache(pytestconfig) -> Path:
    return Path(pytestconfig.cache.mkdir("hat-demo-cache"))


@pytest.fixture(scope="module")
def story(tmp_path_factory, cache) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("demo")
    done = run_demo(tmp, cache)
    return tmp, done.stdout + done.stderr


def sessions(tmp: Path):
    return make_session_factory(make_engine(f"sqlite:///{tmp / '.hat' / 'hat.db'}"))


def artefact_paths(out: str) -> dict[str, Path]:
    """The closing list "where everything is": each `  what: /path` line."""
    section = out.split("where everything is", 1)[1]
    matches = (re.match(r"^  ([^:]+): (/\S+)$", line) for line in section.splitlines())
    return {m.group(1): Path(m.group(2)) for m in matches if m}


def test_the_story_before_training(story):
    _, out = story
    assert "v1 -> v2: 13 surface, 0 semantic changes (surface only" in out
    assert "v2 -> v3: " in out and "tool bundle.offers added" in out
    assert "pass rate: v1 100%, v2 100%, v3 100%, v4 100%" in out
    assert "pass rate: v1 100%, v2 60%, v3 60%, v4 47%" in out      # memorised v1
    assert re.search(r"base model \((built now, and cached|copied from the cache)", out)


def test_three_weeks_one_job_each_and_a_champion(story):
    tmp, out = story
    with sessions(tmp)() as s:
        versions = {v.number: v for v in list_versions(s)}
        jobs = {n: list_jobs(s, harness_version_id=v.id) for n, v in versions.items()}
        promotion = current_promotion(s, slot="ab")
        models = {n: find_model_version_for_job(s, job_id=js[0].id, registry_name=REGISTRY)
                  for n, js in jobs.items()}
        stages = {n: [r.stage for r in list_stage_runs(s, job_id=js[0].id)]
                  for n, js in jobs.items()}
    assert sorted(versions) == [1, 2, 3]
    assert {n: [(j.trigger, j.state) for j in js] for n, js in jobs.items()} == {
        n: [("harness-change", "succeeded")] for n in (1, 2, 3)}
    assert set(models[1].gate_results["gates"]) == GATES
    assert promotion is not None and promotion.model_version_id == models[1].id
    assert "zero-shot check: no champion yet: retrain needed" in out
    # the `test` base scores 0 on every harness: 0 against 0 shows nothing, so every
    # zero-shot check is inconclusive and the service retrains v2 and v3
    for n in (2, 3):
        assert stages[n][0] == "zero_shot" and "sft" in stages[n]
        assert models[n] is not None and models[n].gate_results["verdict"] == "inconclusive"
    assert len(re.findall(r"zero-shot check: zero-shot \w+ \(.*\): retrain needed", out)) == 2
    assert "candidate inconclusive on gates: " in out and "challenger: hat-agent" not in out
    # v2 and v3 retrain from the champion (warm start): their data runs say where they started
    tracking = Tracking(f"sqlite:///{tmp / '.hat' / 'mlflow.db'}")
    with sessions(tmp)() as s:
        data_runs = {n: next(r for r in list_stage_runs(s, job_id=jobs[n][0].id)
                             if r.stage == "data") for n in (1, 3)}
    tags = {n: tracking.client.get_run(r.mlflow_run_id).data.tags for n, r in data_runs.items()}
    assert tags[1]["hat.start_model"] == "base" and tags[3]["hat.start_model"] == "champion v1"


def test_the_fixed_harness_model_trains_beside_the_champion(story):
    tmp, out = story
    fixed = tmp / ".hat" / "runs" / "demo-fixed-harness"
    assert (fixed / "sft" / "hat_stage.json").is_file() and (fixed / "result.json").is_file()
    # its reports on v1 and v2 are played in the child, before it writes its result (so while
    # the flow still trains the champion), and read by the demo as they are
    finished = (fixed / "result.json").stat().st_mtime
    for week in ("v1", "v2"):
        report = fixed / "eval" / f"{week}.cases.jsonl"
        assert report.stat().st_mtime <= finished
    manifest = json.loads((fixed / "data" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["variants"] == 0            # the live harness only
    assert "week 1: both models on v1 (t1) and held-out variants (t2)" in out
    assert "zero-shot check of the fixed-harness model on v2" in out
    assert re.search(r"zero-shot on v2: HAT champion \w+, fixed-harness model \w+", out)
    tracking = Tracking(f"sqlite:///{tmp / '.hat' / 'mlflow.db'}")
    assert tracking.client.get_experiment_by_name("demo-fixed-harness") is not None


def test_the_summary_holds_each_week(story):
    tmp, out = story
    summary = json.loads((tmp / "summary.json").read_text(encoding="utf-8"))
    assert summary["format"] == "hat-demo-summary/1" and summary["seconds"] > 0
    weeks = {w["week"]: w for w in summary["weeks"]}
    assert list(weeks) == ["v1", "v2", "v3"]
    assert weeks["v2"]["edit"] == "surface (rename)" and weeks["v3"]["edit"] == "semantic"
    v1 = weeks["v1"]
    for arm in ("hat", "fixed"):
        cell = v1["arms"][arm]["t1"]["first_call_exact"]
        low, high = cell["interval"]
        assert 0 <= low <= cell["value"] <= high <= 1 and cell["cases"] >= 2
    paired_t2 = v1["hat_vs_fixed"]["t2.first_call_exact"]
    assert paired_t2["cases"] >= 2 and paired_t2["p_value"] == 1.0  # 0 against 0
    for arm in ("hat", "fixed"):
        assert weeks["v2"]["zero_shot"][arm]["verdict"] in ("passed", "failed", "inconclusive")
    assert set(weeks["v2"]["zero_shot"]["fixed"]["gates"]["gates"]) == {
        "t1", "t2", "bad_case_rate", "t1_floor", "t2_floor"}
    assert weeks["v3"]["retrained"] is True and weeks["v3"]["gates_verdict"] == "inconclusive"
    assert "candidate_vs_champion" in weeks["v3"]
    assert summary["ab"]["skipped"] == "no challenger"      # nothing passed its gates
    assert summary["review"]["send_to_training"] is True
    assert "hat demo: the weeks" in out and f"summary: {tmp / 'summary.json'}" in out


def test_mlflow_runs_and_registry(story):
    tmp, out = story
    tracking = Tracking(f"sqlite:///{tmp / '.hat' / 'mlflow.db'}")
    experiments = tracking.client.search_experiments()
    runs = tracking.client.search_runs([e.experiment_id for e in experiments])
    assert {r.data.tags.get("hat.stage") for r in runs} >= {"zero_shot", "data", "eval"}
    parents = re.findall(r"parent run ([0-9a-f]{32})", out)
    assert len(parents) == 3
    assert all(tracking.client.get_run(p).info.status == "FINISHED" for p in parents)
    assert tracking.alias_version(REGISTRY, "champion") == "1"
    assert "MLflow model registry: hat-agent" in out


def test_the_closing_table_names_artefacts_that_exist(story):
    _, out = story
    paths = artefact_paths(out)
    assert {"SQL store", "MLflow store", "MLflow artifacts", "base model", "base model cache",
            "v1 job (data, stages, eval reports)",
            "v2 job (zero-shot, stages, eval reports)",
            "v3 job (zero-shot, stages, eval reports)", "fixed-harness model"} <= set(paths)
    assert [what for what, path in paths.items() if not path.exists()] == []
    assert "hat demo: steps" in out and "console logins: viewer / reviewer" in out


def test_the_terminal_tells_the_story_without_library_chatter(story):
    tmp, out = story
    noise = ("{'loss'", "{'train_runtime'", " INFO ", "| INFO", "| WARNING", "FutureWarning",
             "Creating initial MLflow database tables", "ephemeral docs site",
             "Concurrency limits", "gradient_checkpointing", "Token indices sequence length")
    assert [n for n in noise if n in out] == []
    # piped: a long line stays one line
    assert ("a model that memorised v1's names breaks when the harness changes: this is what "
            "harness-aware training fixes") in out.splitlines()
    logs = list((tmp / ".hat" / "logs").glob("demo-*.log"))
    assert len(logs) == 1 and f"library logs: {logs[0]}" in out
    assert "ephemeral docs site" in logs[0].read_text(encoding="utf-8")  # GE's line, kept there
    uri = f"sqlite:///{tmp / '.hat' / 'mlflow.db'}"
    assert f"next: MLflow UI: `mlflow ui --backend-store-uri {uri}`" in out
    assert f"next: Prefect UI: `PREFECT_HOME={tmp / '.hat' / 'prefect'} prefect server start`" \
        in out


def test_the_demo_writes_under_hat_home_only(story):
    tmp, _ = story
    assert sorted(p.name for p in (tmp / "user").iterdir()) == []   # no ~/.prefect, ~/.cache
    assert (tmp / ".hat" / "prefect" / "prefect.db").is_file()
    assert (tmp / ".hat" / "prefect-results").is_dir()


def test_a_rerun_finds_everything_handled(story, cache):
    tmp, _ = story
    again = run_demo(tmp, cache).stdout
    assert "was already handled (succeeded)" in again
    assert "base model (already in this home" in again
    with sessions(tmp)() as s:
        assert sorted(v.number for v in list_versions(s)) == [1, 2, 3]
        assert len(list_jobs(s)) == 3
        assert len(list_model_versions(s)) == 3
    assert "fixed-harness model: already trained in" in again
    assert "already the champion: hat-agent v1" in again


def test_the_console_shows_the_diff_the_jobs_and_the_gates(story, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from db.sessions_repo import open_session
    from db.users_repo import get_user

    tmp, _ = story
    monkeypatch.setenv("HAT_HOME", str(tmp / ".hat"))
    for name in ("HAT_DATABASE_URL", "HAT_MLFLOW_TRACKING_URI", "PREFECT_API_URL"):
        monkeypatch.delenv(name, raising=False)
    with sessions(tmp)() as s:
        admin = get_user(s, name="admin")
    shown = {}
    for page in ("harness_diff", "runs", "release"):
        at = AppTest.from_file(str(ROOT / "ui" / "app.py"), default_timeout=60)
        at.session_state["session_token"] = in_transaction(
            sessions(tmp), lambda s: open_session(s, user_id=admin.id, client="console"))
        at.run()
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        shown[page] = "\n".join([str(e.value) for e in at.markdown] +
                                [df.value.to_string() for df in at.dataframe])
    # the newest edit by default: v2 -> v3, a new skill and tool
    assert "semantic" in shown["harness_diff"] and "bundle" in shown["harness_diff"]
    assert all(f"live-stream-avatar v{n}" in shown["runs"] for n in (1, 2, 3))
    assert "hat-agent v1" in shown["release"] and "t1.accuracy" in shown["release"]
    assert "hat-agent v3" in shown["release"]       # the v3 candidate and its gates
