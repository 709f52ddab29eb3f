"""`hat data build|import|validate` through the installed console script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HAT = str(Path(sys.executable).parent / "hat")
ROOT = Path(__file__).resolve().parents[2]
V1 = str(ROOT / "examples" / "harnesses" / "v1.yaml")
TINY = str(ROOT / "examples" / "configs" / "data_tiny.yaml")
LOGS = ROOT / "examples" / "logs" / "live_sample.jsonl"
SMALL = ["--set", "scenarios=20", "--set", "variants=1", "--set", "splits.heldout_variants=1",
         "--set", "opd.size=10"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HAT, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("cli") / "ds"
    return out, run("data", "build", "--harness", V1, "--config", TINY, "--out", str(out),
                    *SMALL)


def test_build_prints_a_closing_summary(dataset):
    out, result = dataset
    assert result.returncode == 0, result.stderr
    for words in ("rollouts ", "kept ", "rejected ", "retries kept ", "dataset "):
        assert words in result.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert f"dataset {manifest['version']} ready" in result.stdout
    assert manifest["harness"]["ref"] == V1


def test_validate_passes_a_built_dataset(dataset):
    out, _ = dataset
    result = run("data", "validate", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAILED" not in result.stdout and "ok     no held-out product" in result.stdout


def test_validate_exits_2_on_a_leaked_heldout_product(dataset, tmp_path):
    from datasets import DatasetDict, load_from_disk

    out, _ = dataset
    leaked = tmp_path / "leaked"
    shutil.copytree(out, leaked, ignore=shutil.ignore_patterns("dataset"))
    product = json.loads((out / "heldout.json").read_text())["products"][0]
    data = load_from_disk(str(out / "dataset"))
    rows = data["train"].to_list()
    rows[0]["messages"][1]["content"] += f"（{product} 也有吗）"
    DatasetDict({**data, "train": data["train"].from_list(rows)}).save_to_disk(
        str(leaked / "dataset"))
    result = run("data", "validate", str(leaked))
    assert result.returncode == 2
    assert "FAILED no held-out product outside test: 1 of" in result.stdout
    assert "failed validation" in result.stderr
    report = (leaked / "validation" / "report.md").read_text()
    assert rows[0]["scenario_id"] in report


def test_build_exits_2_when_validation_fails(tmp_path):
    out = tmp_path / "bad"
    result = run("data", "build", "--harness", V1, "--config", TINY, "--out", str(out), *SMALL,
                 "--set", "validation.max_skill_share=0.05", "--quiet")
    assert result.returncode == 2
    assert "failed validation" in result.stderr and "Traceback" not in result.stderr
    assert (out / "validation" / "report.md").is_file()


def test_a_bad_config_key_exits_2_listing_valid_keys(tmp_path):
    result = run("data", "build", "--harness", V1, "--out", str(tmp_path / "x"),
                 "--set", "rejection.min_acc=1")
    assert result.returncode == 2
    assert "rejection.min_acc: unknown key; valid keys: min_accuracy, min_effectiveness" in (
        result.stderr)


def test_import_reports_bad_rows_by_line(tmp_path):
    lines = LOGS.read_text(encoding="utf-8").splitlines()[:12]
    lines[4] = lines[4].replace('"function": {"name": "', '"function": {"name": "fetch_', 1)
    lines[7] = "{truncated"
    bad = tmp_path / "logs.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run("data", "import", str(bad), "--harness", V1, "--out", str(tmp_path / "imp"))
    assert result.returncode == 0, result.stderr
    assert "2 bad row(s) left out" in result.stderr
    assert f"{bad}:5" in result.stderr and "unknown tool 'fetch_" in result.stderr
    assert f"{bad}:8: not JSON" in result.stderr
    assert "imported 10 conversation(s)" in result.stdout
    strict = run("data", "import", str(bad), "--harness", V1, "--out", str(tmp_path / "s"),
                 "--strict")
    assert strict.returncode == 2 and f"{bad}:5" in strict.stderr
    assert not (tmp_path / "s").exists()


def test_build_against_a_previous_harness_weights_its_new_kinds(tmp_path):
    harnesses = ROOT / "examples" / "harnesses"
    out = tmp_path / "v3"
    result = run("data", "build", "--harness", str(harnesses / "v3.yaml"), "--previous",
                 str(harnesses / "v2.yaml"), "--config", TINY, "--out", str(out), *SMALL,
                 "--set", "variants=0", "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    from datasets import load_from_disk

    kinds = [r["kind"] for split in load_from_disk(str(out / "dataset")).values()
             for r in split.to_list()]
    assert kinds.count("bundle") >= len(kinds) // 5  # 25% of the bank, less the rejects
