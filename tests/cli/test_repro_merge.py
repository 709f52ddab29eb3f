"""`hat repro --merge` and `benchmarks/repro_table.py --merge`: seeds run as separate processes
become one table; runs of different configs, a seed twice or a file that is not a results
document are refused (exit 2, the file and the reason) and write nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hat_core.repro.config import ARMS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "repro_table.py"
HAT = str(Path(sys.executable).parent / "hat")


def _run(seed: str, t1: float, config: dict) -> dict:
    evals = {arm: {"metrics": {"t1.pass_rate": t1, "t2.pass_rate": t1 / 2},
                   "edits": {"v2": {"bad": 1, "cases": 4}},
                   "failures": {"t1": {"wrong_tool": 1}}} for arm in ARMS}
    return {"config": config, "wall_seconds": 100.0, "mlflow_uri": f"sqlite:///{seed}.db",
            "seeds": {seed: {"eval": evals, "timings": {"base": 1.0},
                             "stages": {"hat_rl": {"history": [{"step": 1, "loss": 0.5}]}}}}}


def _write(tmp_path: Path, name: str, run: dict) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(run))
    return path


@pytest.fixture(params=["hat", "benchmark"])
def merge(request):
    def run(*paths: Path, out: Path) -> subprocess.CompletedProcess:
        if request.param == "hat":
            args = [HAT, "repro", *[x for p in paths for x in ("--merge", str(p))]]
        else:
            args = [sys.executable, str(SCRIPT), "--merge", *map(str, paths)]
        return subprocess.run([*args, "--out", str(out)], capture_output=True, text=True,
                              timeout=300, cwd=ROOT)
    return run


@pytest.fixture
def config() -> dict:
    return {"base_size": "toy-long", "seeds": [0], "threads": 2, "eval": {"episodes": 8}}


def test_merge_writes_one_table_over_the_seeds(tmp_path, config, merge):
    run_b = _run("1", 0.7, config | {"seeds": [1], "threads": 1})
    cases = tmp_path / "hat.cases.jsonl"
    cases.write_text('{"suite": "t1", "passed": true, "failures": []}\n'
                     '{"suite": "t1", "passed": false, "failures": ["wrong_tool"]}\n')
    run_b["seeds"]["1"]["eval"]["hat"]["cases"] = [str(cases)]
    run_a = _run("0", 0.5, config)
    run_a["seeds"]["0"]["eval"]["hat"]["cases"] = [str(tmp_path / "gone.cases.jsonl")]
    a = _write(tmp_path, "a", run_a)
    b = _write(tmp_path, "b", run_b)
    done = merge(a, b, out=tmp_path / "out")
    assert done.returncode == 0, done.stderr
    merged = json.loads((tmp_path / "out" / "results.json").read_text())
    assert sorted(merged["seeds"]) == ["0", "1"] and merged["wall_seconds"] == 200.0
    assert merged["mlflow_uris"] == ["sqlite:///0.db", "sqlite:///1.db"]
    table = (tmp_path / "out" / "table.md").read_text()
    assert "| Fixed-Harness SFT | 60.0 ± 14.1 |" in table
    assert "wrong_tool 2" in table
    assert "200 s summed over 2 runs (the longest 100 s" in table
    # right-tool counts come from the case files (still on disk) into the merged document
    assert merged["seeds"]["1"]["eval"]["hat"]["right_tool"] == {"t1": [1, 2]}
    assert "right_tool" not in merged["seeds"]["0"]["eval"]["hat"]      # its files are gone


def test_merge_refuses_runs_of_different_configs(tmp_path, config, merge):
    a = _write(tmp_path, "a", _run("0", 0.5, config))
    b = _write(tmp_path, "b", _run("1", 0.7, config | {"eval": {"episodes": 16}}))
    done = merge(a, b, out=tmp_path / "out")
    assert done.returncode == 2
    assert "config differs" in done.stderr and "eval" in done.stderr
    assert not (tmp_path / "out").exists()


def test_merge_refuses_a_seed_twice(tmp_path, config, merge):
    a = _write(tmp_path, "a", _run("0", 0.5, config))
    b = _write(tmp_path, "b", _run("0", 0.7, config))
    done = merge(a, b, out=tmp_path / "out")
    assert done.returncode == 2 and "appear twice" in done.stderr
    assert not (tmp_path / "out").exists()


def test_merge_refuses_a_file_that_is_not_a_results_document(tmp_path, config, merge):
    a = _write(tmp_path, "a", _run("0", 0.5, config))
    bad = tmp_path / "bad.json"
    bad.write_text('{"config": {}}')
    done = merge(a, bad, out=tmp_path / "out")
    assert done.returncode == 2 and "bad.json" in done.stderr and "not a results" in done.stderr
    assert not (tmp_path / "out").exists()


def test_merge_logs_the_aggregates_to_mlflow_when_a_uri_is_given(tmp_path, config):
    from mlflow.tracking import MlflowClient

    runs = []
    for seed, fixed, hat in (("0", "1100", "1110"), ("1", "1000", "1111")):
        run = _run(seed, 0.5, config | {"seeds": [int(seed)]})
        for arm, bits in (("fixed_sft", fixed), ("hat", hat)):
            run["seeds"][seed]["eval"][arm]["outcomes"] = {"t1": {
                "case_ids": [f"t1/s{i}" for i in range(4)], "passed": bits}}
        runs.append(_write(tmp_path, seed, run))
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    done = subprocess.run([HAT, "repro", "--merge", str(runs[0]), "--merge", str(runs[1]),
                           "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work"),
                           "--tracking-uri", uri], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    client = MlflowClient(tracking_uri=uri)
    [run] = client.search_runs([client.get_experiment_by_name("hat-repro").experiment_id])
    assert run.info.run_id in done.stdout and run.data.tags["hat.seeds"] == "0,1"
    m = run.data.metrics
    assert m["agg.hat.t1.passed.pooled"] == 7 / 8 and m["agg.fixed_sft.t1.passed.pooled"] == 3 / 8
    assert m["paired.fixed_sft.hat.t1.passed.diff"] == 0.5
    assert "paired.fixed_sft.hat.t1.passed.p" in m
    # without a URI a merge writes no MLflow store
    env = {k: v for k, v in os.environ.items() if k != "HAT_MLFLOW_TRACKING_URI"}
    done = subprocess.run([HAT, "repro", "--merge", str(runs[0]), "--out", str(tmp_path / "o2"),
                           "--work", str(tmp_path / "w2")], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    assert "aggregates: MLflow run" not in done.stdout and not (tmp_path / "w2").exists()
