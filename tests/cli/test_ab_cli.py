"""`hat ab analyze|simulate`: the example file, JSON output, and broken files (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from hat_cli.ab_cmd import app

HAT = str(Path(sys.executable).parent / "hat")
SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ab" / "sample.csv"
runner = CliRunner()


def analyze(*args: str):
    return runner.invoke(app, ["analyze", *args])


def test_the_example_is_what_simulate_writes(tmp_path):
    out = tmp_path / "sample.csv"
    result = runner.invoke(app, ["simulate", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == SAMPLE.read_bytes()
    assert len(pd.read_csv(SAMPLE)) == 3000


def test_analyze_the_example_prints_a_table_through_the_hat_script():
    result = subprocess.run([HAT, "ab", "analyze", str(SAMPLE), "--expected-split", "0.8",
                             "--bootstrap", "200"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    for text in ("detail_page_views", "confirmed_receipt_gmv", "CI (Welch, delta)",
                 "sample ratio ok", "correction holm"):
        assert text in result.stdout
    assert result.stderr == ""


def test_analyze_json():
    result = analyze(str(SAMPLE), "--expected-split", "0.8", "--json", "--bootstrap", "200",
                     "--metrics", "gmv,detail_page_views", "--correction", "fdr_bh")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [m["metric"] for m in data["metrics"]] == ["gmv", "detail_page_views"]
    assert data["srm"]["mismatch"] is False and data["settings"]["correction"] == "fdr_bh"
    views = data["metrics"][1]
    assert views["welch"]["ci_low"] < views["welch"]["lift"] < views["welch"]["ci_high"]
    assert views["bootstrap"]["method"] == "bootstrap-percentile"


def test_markdown_and_a_flagged_sample_ratio():
    result = analyze(str(SAMPLE), "--markdown", "--bootstrap", "0", "--metrics", "gmv")
    assert result.exit_code == 0
    assert "| gmv |" in result.stdout and "SAMPLE RATIO MISMATCH" in result.stdout
    assert "not trustworthy" in result.stderr


def broken(tmp_path: Path, edit) -> Path:
    frame = pd.read_csv(SAMPLE, dtype=str)
    frame = edit(frame)
    path = tmp_path / "broken.csv"
    frame.to_csv(path, index=False)
    return path


def test_a_missing_column_exits_2_through_the_hat_script(tmp_path):
    path = broken(tmp_path, lambda f: f.drop(columns=["arm"]))
    result = subprocess.run([HAT, "ab", "analyze", str(path)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "cannot analyse (1 problems)" in result.stderr
    assert "  - arm: missing column (the file has: user_id, day, gmv" in result.stderr


def test_unknown_arm_and_text_in_a_metric_exit_2_naming_line_and_column(tmp_path):
    def edit(f):
        f.loc[9, "arm"] = "treatmnet"
        f.loc[41, "gmv"] = "n/a yuan"
        return f

    result = analyze(str(broken(tmp_path, edit)))
    assert result.exit_code == 2
    assert "line 11, column arm: unknown arm 'treatmnet' (1 rows; expected 'control' or " \
           "'treatment'" in result.stderr
    assert "line 43, column gmv: 'n/a yuan' is not a finite number" in result.stderr


def test_custom_arm_labels_and_bad_options(tmp_path):
    path = broken(tmp_path, lambda f: f.assign(arm=f["arm"].map({"control": "react",
                                                                 "treatment": "harness"})))
    ok = analyze(str(path), "--control", "react", "--treatment", "harness", "--bootstrap", "0",
                 "--expected-split", "0.8", "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["treatment"] == "harness"
    bad = analyze(str(path), "--correction", "bonferroni", "--expected-split", "1.2")
    assert bad.exit_code == 2
    assert "expected_split: 1.2: the control share" in bad.stderr
    assert "correction: one of holm, fdr_bh, none" in bad.stderr
    assert analyze(str(tmp_path / "none.csv")).exit_code == 2
