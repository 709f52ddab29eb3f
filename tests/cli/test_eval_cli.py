"""`hat eval score-ifeval|score-tool-calls|run` and `hat latency` through the console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai_server import fake_server
from shared_data import IFEVAL, SHARED, shared, write_rows

from hat_core.evaluation.policy import INVALID_CALL

ROOT = Path(__file__).resolve().parents[2]

HAT = str(Path(sys.executable).parent / "hat")
BFCL = ROOT / "examples" / "bfcl"


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([HAT, *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)






def test_score_ifeval_gpt4_with_nltk_data_from_the_environment(tmp_path):
    env = dict(os.environ, HAT_NLTK_DATA=str(shared(SHARED / "nltk_data")))
    out = tmp_path / "verdicts.jsonl"
    result = run("eval", "score-ifeval",
                 "--inputs", str(shared(IFEVAL / "input_data_gpt4_20231107_145030.jsonl")),
                 "--responses",
                 str(shared(IFEVAL / "input_response_data_gpt4_20231107_145030.jsonl")),
                 "--out", str(out), env=env)
    assert result.returncode == 0, result.stderr
    assert "sentence splitter punkt_tab:" in result.stdout
    assert "(416/541)" in result.stdout or "(417/541)" in result.stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 541
    assert {"key", "strict", "loose", "random_dependent", "missing_response"} <= set(rows[0])


def test_score_ifeval_reports_missing_and_unmatched(tmp_path):
    inputs = write_rows(tmp_path / "in.jsonl", [
        {"key": 1, "prompt": "a", "instruction_id_list": ["punctuation:no_comma"],
         "kwargs": [{}]},
        {"key": 2, "prompt": "b", "instruction_id_list": ["punctuation:no_comma"],
         "kwargs": [{}]}])
    responses = write_rows(tmp_path / "r.jsonl", [{"key": 1, "response": "fine"},
                                                 {"key": 7, "response": "lost"}])
    env = {k: v for k, v in os.environ.items() if k != "HAT_NLTK_DATA"}
    result = run("eval", "score-ifeval", "--inputs", str(inputs), "--responses",
                 str(responses), env=env)
    assert result.returncode == 0, result.stderr
    assert "sentence splitter untrained" in result.stdout
    assert "(1/2)" in result.stdout and "missing_response             1" in result.stdout
    assert f"unmatched response at {responses}:2" in result.stderr


def test_score_ifeval_bad_input_exits_2(tmp_path):
    result = run("eval", "score-ifeval", "--inputs", str(tmp_path / "none.jsonl"),
                 "--responses", str(tmp_path / "none.jsonl"))
    assert result.returncode == 2 and "no such file" in result.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": 1, "prompt": "a", "instruction_id_list": [], "kwargs": []}\n[1]\n')
    result = run("eval", "score-ifeval", "--inputs", str(bad), "--responses", str(bad))
    assert result.returncode == 2 and f"{bad}:2" in result.stderr
    assert "Traceback" not in result.stderr


def test_score_tool_calls_on_the_sample_files(tmp_path):
    common = ["eval", "score-tool-calls", "--questions", str(BFCL / "questions.jsonl"),
              "--answers", str(BFCL / "possible_answers.jsonl")]
    right = run(*common, "--candidates", str(BFCL / "candidates_right.jsonl"))
    assert right.returncode == 0 and "accuracy 100.00%" in right.stdout
    out = tmp_path / "v.jsonl"
    wrong = run(*common, "--candidates", str(BFCL / "candidates_wrong.jsonl"), "--out", str(out))
    assert wrong.returncode == 0 and "accuracy 0.00%" in wrong.stdout
    assert "unparseable_arguments  1" in wrong.stdout
    assert {json.loads(x)["error_type"] for x in out.read_text().splitlines()} >= {
        "wrong_count", "wrong_function"}


def test_latency_against_an_endpoint_writes_reports(tmp_path):
    out = tmp_path / "lat.json"
    with fake_server(tokens=3, delay=0.01) as (url, _):
        result = run("latency", url, "--concurrency", "1,2", "--requests", "4",
                     "--profile", "cpu-tiny", "--out", str(out))
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert report["passed"] and report["model"] == "fake-model"
    assert [lv["concurrency"] for lv in report["levels"]] == [1, 2]
    assert out.with_suffix(".md").exists() and "| gate |" in result.stdout


def test_latency_exits_2_and_names_the_failed_gate():
    with fake_server(fail_first=100) as (url, _):
        result = run("latency", url, "--concurrency", "1", "--requests", "2",
                     "--profile", "h20", "--model", "m")
    assert result.returncode == 2
    assert "gate failed: concurrency 1: error_rate <= 0.0" in result.stderr


def test_latency_bad_arguments_exit_2():
    result = run("latency", "http://127.0.0.1:9", "--profile", "nope")
    assert result.returncode == 2 and "cpu-tiny" in result.stderr
    result = run("latency", "http://127.0.0.1:9", "--concurrency", "0,x")
    assert result.returncode == 2 and "concurrency" in result.stderr
    result = run("latency", "no/such/dir", "--profile", "cpu-tiny")
    assert result.returncode == 2 and "neither" in result.stderr


def test_eval_run_against_an_endpoint(tmp_path):
    out = tmp_path / "report.json"
    with fake_server(reply=lambda body: "hello world") as (url, state):
        result = run("eval", "run", url, "--model-name", "m", "--suites", "ifeval",
                     "--limit", "4", "--max-tokens", "32", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert len(state.bodies) == 4 and state.bodies[0]["max_tokens"] == 32
    report = json.loads(out.read_text())
    assert report["suites"][0]["suite"] == "ifeval" and len(report["suites"][0]["rows"]) == 4
    assert "ife_p" in out.with_suffix(".md").read_text()
    unknown = run("eval", "run", url, "--model-name", "m", "--suites", "t9")
    assert unknown.returncode == 2 and "valid suites" in unknown.stderr


def test_eval_run_shows_the_harness_in_the_chosen_render_profile(tmp_path, v1_path):
    prompts = {}
    for profile in ("full", "compact"):
        with fake_server(reply=lambda body: "好的") as (url, state):
            result = run("eval", "run", url, "--model-name", "m", "--suites", "t1",
                         "--harness", str(v1_path), "--episodes", "1", "--max-tokens", "8",
                         "--render-profile", profile, "--out", str(tmp_path / f"{profile}.json"))
        assert result.returncode == 0, result.stderr
        body = state.bodies[0]
        prompts[profile] = (body["messages"][0]["content"], body.get("tools") or [])
    (full, full_tools), (compact, compact_tools) = prompts["full"], prompts["compact"]
    assert full_tools and not compact_tools       # compact: tools are lines of the prompt
    assert "get_price(" in compact and "get_price(" not in full
    assert len(compact) < len(full)
    bad = run("eval", "run", "oracle", "--suites", "t1", "--harness", str(v1_path),
              "--render-profile", "tiny", "--out", str(tmp_path / "bad.json"))
    assert bad.returncode == 2 and "valid profiles: full, compact" in bad.stderr
    assert not (tmp_path / "bad.json").exists()


def test_eval_model_shorthand_runs_suites(tmp_path, v1_path):
    out = tmp_path / "report.json"
    result = run("eval", "oracle", "--suites", "t1", "--harness", str(v1_path),
                 "--episodes", "15", "--out", str(out))
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert "t1" in json.dumps(report)
    unknown = run("eval", "score-nothing")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr



@pytest.mark.slow
def test_eval_run_constrain_tools_holds_a_local_models_calls(tmp_path, v1_path):
    import yaml

    out = tmp_path / "held.json"
    result = run("eval", "run", str(ROOT / "examples" / "models" / "toy-long"), "--suites", "t1",
                 "--harness", str(v1_path), "--episodes", "2", "--max-tokens", "160",
                 "--render-profile", "compact", "--constrain-tools", "--out", str(out))
    assert result.returncode == 0, result.stderr
    names = {t["name"] for t in yaml.safe_load(v1_path.read_text())["tools"]}
    called = [c["function"]["name"] for line in out.with_suffix(".cases.jsonl").open()
              for m in json.loads(line)["transcript"] if m.get("role") == "assistant"
              for c in m.get("tool_calls") or ()]
    closed = [n for n in called if n != INVALID_CALL]  # a call cut at max-tokens is invalid
    assert closed and set(closed) <= names, called


def test_eval_run_refuses_a_batch_size_below_one_or_for_a_model_it_cannot_batch(tmp_path,
                                                                                 v1_path):
    for model, size, said in (("oracle", "4", "oracle is not a local model directory"),
                              ("http://127.0.0.1:9", "4", "is not a local model directory"),
                              (str(ROOT / "examples" / "models" / "toy-long"), "0",
                               "--batch-size must be >= 1, got 0")):
        bad = run("eval", "run", model, "--model-name", "m", "--suites", "t1", "--harness",
                  str(v1_path), "--batch-size", size, "--out", str(tmp_path / "bad.json"))
        assert bad.returncode == 2 and said in bad.stderr, bad.stderr
        assert not (tmp_path / "bad.json").exists()


def test_eval_run_refuses_constrain_tools_for_scripted_policies_and_endpoints(tmp_path, v1_path):
    for model in ("oracle", "http://127.0.0.1:9"):
        bad = run("eval", "run", model, "--model-name", "m", "--suites", "t1", "--harness",
                  str(v1_path), "--constrain-tools", "--out", str(tmp_path / "bad.json"))
        assert bad.returncode == 2 and "--constrain-tools" in bad.stderr, bad.stderr
        assert not (tmp_path / "bad.json").exists()
