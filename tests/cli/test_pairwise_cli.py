"""`hat pairwise create` from stored data: two real evaluations logged to a real MLflow SQLite
store (`hat_core.evaluation.tracking.log_report`, as `hat eval run --mlflow-uri` does) and a
retrain-style eval stage run (`reports/candidate|champion.cases.jsonl`), into a migrated SQLite
store. The review holds the shared cases blind (both left/right orders, no system named);
bad input exits 2 with what and where and stores nothing. The console's creation function
is checked on the same data."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from db.engine import in_transaction, make_engine, make_session_factory
from db.users_repo import add_user
from hat_cli.main import app
from hat_core.errors import ConfigError
from hat_core.evaluation.evaluate import EvalOptions, case_rows, evaluate, write_cases
from hat_core.evaluation.report import write_report
from hat_core.evaluation.tracking import log_report
from hat_core.evidence.review_from_runs import review_items_from_cases
from hat_core.harness.io import load_harness
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy

HARNESSES = Path(__file__).resolve().parents[2] / "examples" / "harnesses"
V1, V2 = HARNESSES / "v1.yaml", HARNESSES / "v2.yaml"
OLGA_PW = "olga long password"


def logged_eval(policy, uri: str, out: Path, seed: int = 0):
    """Evaluate `policy` on v2 (t1 + t2), log it to MLflow; (run id, case rows)."""
    report = evaluate(policy, load_harness(V2), ["t1", "t2"],
                      EvalOptions(episodes=6, variants=1, seed=seed))
    json_path, _ = write_report(report, out)
    cases = write_cases(report, out.with_suffix(".cases.jsonl"))
    return log_report(report, uri=uri, artifacts=[json_path, cases]), case_rows(report)


@pytest.fixture(scope="module")
def mlflow_runs(tmp_path_factory):
    """Runs: oracle, memorising, oracle on another eval seed, and a retrain eval stage."""
    from mlflow.tracking import MlflowClient

    tmp = tmp_path_factory.mktemp("pairwise-mlflow")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    client.create_experiment("hat-eval", artifact_location=(tmp / "artifacts").as_uri())
    runs = {"uri": uri}
    runs["oracle"] = logged_eval(OraclePolicy(), uri, tmp / "oracle" / "report.json")
    runs["memo"] = logged_eval(MemorisingPolicy(load_harness(V1)), uri,
                               tmp / "memo" / "report.json")
    runs["seed1"] = logged_eval(OraclePolicy(), uri, tmp / "seed1" / "report.json", seed=1)
    reports = tmp / "job" / "reports"
    reports.mkdir(parents=True)
    for name, side in (("candidate", "oracle"), ("champion", "memo")):
        shutil.copyfile(tmp / side / "report.cases.jsonl", reports / f"{name}.cases.jsonl")
    stage = client.create_run(client.get_experiment_by_name("hat-eval").experiment_id)
    client.log_artifacts(stage.info.run_id, str(reports), "reports")
    runs["stage"] = stage.info.run_id
    return runs


@pytest.fixture
def store(databases, mlflow_runs, tmp_path, monkeypatch):
    url = databases.migrated("sqlite")
    monkeypatch.setenv("HAT_DATABASE_URL", url)
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HAT_MLFLOW_TRACKING_URI", mlflow_runs["uri"])
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    in_transaction(sessions, lambda s: add_user(s, name="olga", role="operator",
                                                password=OLGA_PW, actor="test"))
    login = CliRunner().invoke(app, ["login", "olga", "--password-stdin"], input=OLGA_PW + "\n")
    assert login.exit_code == 0, login.output  # the reviews below are opened as olga
    yield sessions
    engine.dispose()


def hat(*args: str):
    return CliRunner().invoke(app, ["pairwise", "create", *args])


def reviews(store):
    from db.pairwise_repo import list_pairwise_reviews

    with store() as s:
        return list_pairwise_reviews(s)


def test_a_review_from_two_runs_is_blind(store, mlflow_runs):
    from db.pairwise_repo import close_pairwise_review, list_blind_items, review_outcome

    (run_a, rows_a), (run_b, rows_b) = mlflow_runs["oracle"], mlflow_runs["memo"]
    result = hat("--title", "wk49 oracle vs memo", "--from-runs", run_a, run_b, "--limit", "8",
                 "--seed", "5", "--actor", "olga", "--rule-judge")
    assert result.exit_code == 0, result.output
    assert "opened pairwise review 1 (wk49 oracle vs memo): 8 items" in result.output
    expected = review_items_from_cases(rows_a, rows_b, limit=8, rng=random.Random(5),
                                       with_judge=True)
    with store() as s:
        shown = list_blind_items(s, review_id=1)
    assert [i.scenario_id for i in shown] == [e.scenario_id for e in expected]
    a_left = [i.response_left == e.response_a for i, e in zip(shown, expected, strict=True)]
    assert 0 < sum(a_left) < 8  # A is shown on both sides
    for item, e in zip(shown, expected, strict=True):
        assert {item.response_left, item.response_right} == {e.response_a, e.response_b}
        assert run_a not in repr(item) and run_b not in repr(item)
    outcome = in_transaction(store, lambda s: (
        close_pairwise_review(s, review_id=1, actor="olga"), review_outcome(s, review_id=1))[1])
    assert (outcome.system_a, outcome.system_b, outcome.seed) == (f"run {run_a}",
                                                                  f"run {run_b}", 5)
    assert [i.judge_choice for i in outcome.items] == [e.judge for e in expected]


def test_bad_input_exits_2_and_stores_nothing(store, mlflow_runs):
    run_a, run_b = mlflow_runs["oracle"][0], mlflow_runs["memo"][0]
    unknown = hat("--title", "t", "--from-runs", run_a, "nosuchrun")
    assert unknown.exit_code == 2 and "no MLflow run nosuchrun" in unknown.output
    worlds = hat("--title", "t", "--from-runs", run_a, mlflow_runs["seed1"][0])
    assert worlds.exit_code == 2 and "played different scenarios" in worlds.output
    assert "t1/original/s00000-product_fact: A:" in worlds.output
    several = hat("--title", "t", "--from-runs", mlflow_runs["stage"], run_b)
    assert several.exit_code == 2 and "has several cases files; name one" in several.output
    assert "valid: reports/candidate.cases.jsonl, reports/champion.cases.jsonl" in several.output
    both = hat("--title", "t", "--from-runs", run_a, run_b, "--items", "x.jsonl")
    assert both.exit_code == 2 and "give exactly one source" in both.output
    suites = hat("--title", "t", "--from-runs", run_a, run_b, "--suites", "ifeval")
    assert suites.exit_code == 2 and "'ifeval' is not one of t1, t2" in suites.output
    assert reviews(store) == []


def test_a_run_with_several_cases_files_takes_one_by_name(store, mlflow_runs):
    stage = mlflow_runs["stage"]
    result = hat("--title", "job 1", "--from-runs", f"{stage}:reports/candidate.cases.jsonl",
                 f"{stage}:reports/champion.cases.jsonl")
    assert result.exit_code == 0, result.output
    assert "12 items" in result.output and "judge" not in result.output  # off by default


def add_checkpoint(store, run_id: str) -> int:
    from db.harness_repo import submit_harness
    from db.jobs_repo import add_stage_run, create_job
    from db.release_repo import register_model_version

    def fill(s):
        version = submit_harness(s, harness=load_harness(V2), author="ann", note="")
        job = create_job(s, harness_version_id=version.id, trigger="hand")
        add_stage_run(s, job_id=job.id, stage="eval", mlflow_run_id=run_id)
        register_model_version(s, registry_name="hat-agent", version="3", job_id=job.id)
        return register_model_version(s, registry_name="hat-agent", version="2").id

    return in_transaction(store, fill)


def test_a_checkpoint_against_the_production_baseline(store, mlflow_runs):
    from db.eval_runs import evaluated_checkpoints
    from db.pairwise_repo import close_pairwise_review, review_outcome

    add_checkpoint(store, mlflow_runs["stage"])
    with store() as s:
        assert [c.label for c in evaluated_checkpoints(s)] == ["hat-agent v3"]  # v2: no eval
    result = hat("--title", "v3 vs prod", "--from-checkpoints", "3", "production",
                 "--limit", "5", "--seed", "1")
    assert result.exit_code == 0, result.output
    assert "A = hat-agent v3, B = production baseline (job 1)" in result.output
    outcome = in_transaction(store, lambda s: (
        close_pairwise_review(s, review_id=1, actor="x"), review_outcome(s, review_id=1))[1])
    assert outcome.model_version_a_id == 1 and outcome.model_version_b_id is None
    assert len(outcome.items) == 5
    missing = hat("--title", "t", "--from-checkpoints", "2", "production")
    assert missing.exit_code == 2 and "hat-agent v2 has no evaluation run" in missing.output
    unknown = hat("--title", "t", "--from-checkpoints", "9", "3")
    assert unknown.exit_code == 2 and "no stored version 9 of hat-agent" in unknown.output


def test_the_console_creates_the_same_review_and_checks_the_role(store, mlflow_runs):
    from ui.auth import PermissionDenied
    from ui.views.pairwise import create_review_from_checkpoints

    add_checkpoint(store, mlflow_runs["stage"])
    users = in_transaction(store, lambda s: [
        add_user(s, name=r, role=r, password="pw-123456789", actor="t")
        for r in ("reviewer", "operator")])

    def create(user, **kw):
        return in_transaction(store, lambda s: create_review_from_checkpoints(
            s, user=user, tracking_uri=mlflow_runs["uri"], title="console", checkpoint_a=1,
            **kw))

    with pytest.raises(PermissionDenied):
        create(users[0], checkpoint_b=None)
    review = create(users[1], checkpoint_b=None, limit=4, seed=2)
    assert review.n_items == 4 and review.created_by == "operator"
    with pytest.raises(ConfigError, match="same checkpoint"):
        create(users[1], checkpoint_b=1)


def test_the_example_items_file(store):
    example = HARNESSES.parent / "pairwise" / "sample_items.jsonl"
    unnamed = hat("--title", "example", "--items", str(example))
    assert unnamed.exit_code == 2 and "--items needs the systems' names" in unnamed.output
    assert reviews(store) == []
    result = hat("--title", "example", "--items", str(example), "--system-a", "hat-agent v7",
                 "--system-b", "production baseline")
    assert result.exit_code == 0, result.output
    assert "10 items" in result.output and "judge a/b/tie: 3/3/2" in result.output
