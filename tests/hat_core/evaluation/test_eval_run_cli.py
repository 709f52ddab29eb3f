"""`hat eval run` with simulator suites, bad cases (file and store), MLflow; `hat eval
edit-check`. In-process through Typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hat_cli.main import app

ROOT = Path(__file__).resolve().parents[3]
V1, V2 = ROOT / "examples" / "harnesses" / "v1.yaml", ROOT / "examples" / "harnesses" / "v2.yaml"


def hat(*args: str, env: dict | None = None, stdin: str | None = None):
    return CliRunner().invoke(app, list(args), env=env, input=stdin)


def test_eval_run_with_the_oracle(tmp_path):
    out = tmp_path / "r" / "report.json"
    result = hat("eval", "run", "oracle", "--suites", "t1,t2,cot_length",
                 "--harness", str(V1), "--episodes", "6", "--variants", "2",
                 "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    metrics = {s["suite"]: s["metrics"] for s in report["suites"]}
    assert metrics["t1"]["pass_rate"] == metrics["t2"]["pass_rate"] == 1.0
    assert metrics["t2"]["gap"] == 0.0 and "reply_p95" in metrics["cot_length"]
    cases = (out.parent / "report.cases.jsonl").read_text().splitlines()
    assert len(cases) == 6 + 12 + 6
    assert (out.parent / "report.bad_cases.jsonl").read_text() == ""
    assert "pass_rate" in out.with_suffix(".md").read_text()
    assert "t2" in result.output and "bad cases: 0" in result.output


def test_eval_run_new_against_a_previous_harness(tmp_path):
    out = tmp_path / "new" / "report.json"
    v3 = ROOT / "examples" / "harnesses" / "v3.yaml"
    result = hat("eval", "run", "oracle", "--suites", "new", "--harness", str(v3),
                 "--previous", str(V2), "--new-cases", "4", "--out", str(out))
    assert result.exit_code == 0, result.output
    (suite,) = json.loads(out.read_text())["suites"]
    assert suite["metrics"]["pass_rate"] == 1.0 and suite["summary"]["new_kinds"] == ["bundle"]
    rows = [json.loads(x) for x in (out.parent / "report.cases.jsonl").read_text().splitlines()]
    assert [r["case_id"] for r in rows][:1] == ["new/original/s00000-bundle"] and len(rows) == 4


def test_eval_run_writes_bad_cases_to_file_store_and_mlflow(tmp_path):
    from db.badcases_repo import count_bad_cases
    from db.engine import make_engine, make_session_factory
    from db.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'hat.db'}"
    upgrade(url)
    env = {"HAT_DATABASE_URL": url, "HAT_HOME": str(tmp_path / ".hat")}
    assert hat("user", "add", "ann", "--role", "admin", "--password-stdin", env=env,
               stdin="ann long password\n").exit_code == 0
    assert hat("harness", "submit", str(V1), "--author", "ann", "--note", "n",
               "--password-stdin", env=env, stdin="ann long password\n").exit_code == 0
    out, bad = tmp_path / "report.json", tmp_path / "bad.jsonl"
    mlflow_uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    result = hat("eval", "run", f"memorising:{V1}", "--suites", "t2,tool_robustness",
                 "--harness", "1", "--episodes", "5", "--variants", "2",
                 "--robustness-variants", "1", "--out", str(out), "--bad-cases-out",
                 str(bad), "--store", "--mlflow-uri", mlflow_uri, env=env)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in bad.read_text().splitlines()]
    assert rows and {r["suite"] for r in rows} <= {"t2", "tool_robustness"}
    engine = make_engine(url)
    with make_session_factory(engine)() as s:
        assert count_bad_cases(s) == len(rows)
    engine.dispose()
    assert f"{len(rows)} queued in the store" in result.output

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_uri)
    exp = client.get_experiment_by_name("hat-eval")
    (run,) = client.search_runs([exp.experiment_id])
    report = json.loads(out.read_text())
    t2 = next(s for s in report["suites"] if s["suite"] == "t2")
    assert run.data.metrics["t2.pass_rate"] == t2["metrics"]["pass_rate"] < 1.0
    assert run.data.params["suites"] == "t2,tool_robustness"
    names = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"report.json", "report.md", "report.cases.jsonl"} <= names


def test_eval_run_errors_exit_2(tmp_path):
    out = str(tmp_path / "r.json")
    no_harness = hat("eval", "run", "oracle", "--suites", "t1", "--out", out)
    assert no_harness.exit_code == 2 and "needs a harness" in no_harness.output
    ifeval = hat("eval", "run", "oracle", "--suites", "ifeval", "--harness", str(V1),
                 "--out", out)
    assert ifeval.exit_code == 2 and "needs a language model" in ifeval.output
    unknown = hat("eval", "run", "oracle", "--suites", "t1,t9", "--harness", str(V1),
                  "--out", out)
    assert unknown.exit_code == 2 and "valid suites" in unknown.output
    assert "t2" in unknown.output and "tool_robustness" in unknown.output


def test_edit_check_command(tmp_path):
    out, bad = tmp_path / "edit.json", tmp_path / "edit_bad.jsonl"
    result = hat("eval", "edit-check", "--old", str(V1), "--new", str(V2),
                 "--before", f"memorising:{V1}", "--after", "oracle", "--episodes", "10",
                 "--out", str(out), "--bad-cases-out", str(bad))
    assert result.exit_code == 0, result.output
    check = json.loads(out.read_text())
    assert check["after"]["rate"] == 0.0 and check["relative_reduction"] == 1.0
    assert len(bad.read_text().splitlines()) == check["before"]["bad"] > 0
    assert "relative reduction 100.00%" in result.output
