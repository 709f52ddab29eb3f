"""`hat eval run --judge llm` behind the judge gate, on a real migrated SQLite store and a real
MLflow store: refused (exit 2, nothing written) with too few or disagreeing labels, run and
logged with enough agreeing ones or an audited override; `--judge rule` (the default) never
touches the store. The
LLM judge is `AnsweringJudge`, a subclass of the real `LLMJudge` without the network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_fakes import AnsweringJudge
from typer.testing import CliRunner

from db.badcases_repo import add_bad_case, label_bad_case
from db.engine import in_transaction, make_engine, make_session_factory
from db.harness_repo import submit_harness
from hat_cli.main import app
from hat_core.harness.io import load_harness

V1 = Path(__file__).resolve().parents[3] / "examples" / "harnesses" / "v1.yaml"
LABELS = ["wrong_tool", "hallucinated_fact", "compliance_breach", "no_answer"]
LLM_ARGS = ("--judge", "llm", "--judge-url", "http://judge.invalid/v1",
            "--judge-model", "fake-judge")


@pytest.fixture
def env(databases, tmp_path) -> dict:
    return {"HAT_DATABASE_URL": databases.migrated("sqlite"), "HAT_HOME": str(tmp_path / "h"),
            "HAT_JUDGE_MIN_ITEMS": "12", "HAT_JUDGE_MIN_KAPPA": "0.6"}


def label(url: str, pairs: list[tuple[str, str]]) -> None:
    engine = make_engine(url)

    def fill(s):
        version = submit_harness(s, harness=load_harness(V1), author="a")
        for judge, human in pairs:
            case = add_bad_case(s, episode={}, harness_version_id=version.id,
                                failure_type=judge)
            label_bad_case(s, bad_case_id=case.id, reviewer="rita", label=human,
                           review_state="confirmed")
    in_transaction(make_session_factory(engine), fill)
    engine.dispose()


def run_eval(tmp_path: Path, env: dict, *extra: str):
    args = ["eval", "run", "oracle", "--suites", "t1", "--harness", str(V1), "--episodes", "3",
            "--out", str(tmp_path / "r" / "report.json"),
            "--mlflow-uri", f"sqlite:///{tmp_path / 'mlflow.db'}", *extra]
    return CliRunner().invoke(app, args, env=env)


def test_refused_with_too_few_or_disagreeing_labels_and_nothing_written(tmp_path, env):
    empty = run_eval(tmp_path, env, *LLM_ARGS)
    assert empty.exit_code == 2, empty.output
    for part in ("judge gate refuses the LLM judge fake-judge", "kappa none, n 0",
                 "kappa >= 0.6 on n >= 12", "label more bad cases", "--judge rule"):
        assert part in empty.output
    label(env["HAT_DATABASE_URL"], [(x, x) for x in LABELS]
          + [("wrong_tool", x) for x in LABELS[1:]] * 3)  # 13 pairs, 4 agree
    low = run_eval(tmp_path, env, *LLM_ARGS)
    assert low.exit_code == 2 and "< 0.6 on 13 items" in low.output and "n 13" in low.output
    assert not (tmp_path / "r").exists() and not (tmp_path / "mlflow.db").exists()


def test_an_agreeing_judge_scores_the_run_and_the_run_says_so(tmp_path, env, monkeypatch):
    monkeypatch.setattr("hat_core.evaluation.judging.LLMJudge", AnsweringJudge)
    label(env["HAT_DATABASE_URL"], [(x, x) for x in LABELS] * 3)
    result = run_eval(tmp_path, env, *LLM_ARGS)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["suites"][0]["metrics"]["pass_rate"] == 0.0  # the fake flags every case
    assert report["judge"]["judge"] == "llm" and report["judge"]["n"] == 12
    bad = [json.loads(line) for line in
           (tmp_path / "r" / "report.bad_cases.jsonl").read_text().splitlines()]
    assert len(bad) == 3 and {b["judge_scores"]["judge"] for b in bad} == {"llm:fake-judge"}
    params = mlflow_params(tmp_path)
    assert (params["judge"], params["judge.gate"], params["judge.n"]) == ("llm", "pass", "12")
    assert params["judge.kappa"] == "1.0000" and params["judge.model"] == "fake-judge"
    assert params["judge.min_kappa"] == "0.6" and params["judge.override"] == "-"


def test_an_override_runs_a_refused_judge_and_records_it(tmp_path, env, monkeypatch):
    from db.audit_repo import list_audit

    monkeypatch.setattr("hat_core.evaluation.judging.LLMJudge", AnsweringJudge)
    result = run_eval(tmp_path, env, *LLM_ARGS, "--judge-override", "pilot, labels pending")
    assert result.exit_code == 0, result.output
    assert "judge gate overridden (pilot, labels pending)" in result.output
    params = mlflow_params(tmp_path)
    assert (params["judge.gate"], params["judge.override"]) == ("fail", "pilot, labels pending")
    engine = make_engine(env["HAT_DATABASE_URL"])
    with make_session_factory(engine)() as s:
        (entry,) = list_audit(s, entity="judge_gate")
    engine.dispose()
    assert entry.action == "judge_gate.override" and entry.after["n"] == 0


def test_the_rule_judge_is_the_default_and_needs_no_store(tmp_path):
    env = {"HAT_DATABASE_URL": f"sqlite:///{tmp_path / 'missing' / 'no.db'}"}
    result = run_eval(tmp_path, env)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["suites"][0]["metrics"]["pass_rate"] == 1.0 and "judge" not in report
    params = mlflow_params(tmp_path)
    assert (params["judge"], params["judge.gate"]) == ("rule", "n/a")
    bad = run_eval(tmp_path, env, "--judge", "gpt")
    assert bad.exit_code == 2 and "valid: rule, llm" in bad.output


def mlflow_params(tmp_path: Path) -> dict:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    (run,) = client.search_runs([client.get_experiment_by_name("hat-eval").experiment_id])
    return run.data.params
