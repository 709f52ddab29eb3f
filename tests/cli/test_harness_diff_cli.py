"""`hat harness diff A B [--json]` through the installed console script, and its argument loader."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hat_cli.harness_args import is_version_ref, load_harness_arg
from hat_core.diff.api import HarnessDiff, diff_harness
from hat_core.errors import HarnessError
from hat_core.harness.io import load_harness

HAT = str(Path(sys.executable).parent / "hat")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "harnesses"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([HAT, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def week(version: str) -> str:
    return str(EXAMPLES / f"{version}.yaml")


def test_rename_week_prints_only_surface_changes():
    result = run("harness", "diff", week("v1"), week("v2"))
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0] == "13 changes (13 surface, 0 semantic): surface only"
    assert "[surface] tool product.price renamed: get_price -> query_price" in out
    assert not [line for line in out if line.startswith("[semantic]")]
    assert out[out.index("semantic (0):") + 1] == "none"
    assert "--- a/prompt.sections[tool_use].body" in out


@pytest.mark.parametrize("pair,semantic", [
    (("v2", "v3"), 3),
    (("v3", "v4"), 6),
])
def test_semantic_weeks_print_their_semantic_changes(pair, semantic):
    result = run("harness", "diff", week(pair[0]), week(pair[1]))
    assert result.returncode == 0, result.stderr
    printed = [line for line in result.stdout.splitlines() if line.startswith("[semantic]")]
    assert len(printed) == semantic
    expected = diff_harness(load_harness(week(pair[0])), load_harness(week(pair[1])))
    assert printed == [f"[semantic] {c.summary}" for c in expected.semantic]


def test_json_output_round_trips():
    result = run("harness", "diff", week("v3"), week("v4"), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["surface_only"] is False
    assert data["counts"] == {"surface": 4, "semantic": 6}
    expected = diff_harness(load_harness(week("v3")), load_harness(week("v4")))
    assert HarnessDiff.from_dict(data) == expected


def test_identical_files_print_no_changes():
    result = run("harness", "diff", week("v2"), week("v2"))
    assert (result.returncode, result.stdout) == (0, "no changes\n")


def test_missing_or_invalid_file_exits_2(tmp_path):
    missing = run("harness", "diff", str(tmp_path / "nope.yaml"), week("v1"))
    assert missing.returncode == 2
    assert "nope.yaml: no such harness file" in missing.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("harness: x\nskills: []\n", encoding="utf-8")
    invalid = run("harness", "diff", week("v1"), str(bad))
    assert invalid.returncode == 2
    assert "invalid harness" in invalid.stderr and "Traceback" not in invalid.stderr


def test_load_harness_arg_reports_a_bad_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"harness": "x"}', encoding="utf-8")
    with pytest.raises(HarnessError, match="invalid harness") as info:
        load_harness_arg(str(bad))
    assert "skills: required field is missing" in info.value.report()


def test_load_harness_arg_prefers_an_existing_file(tmp_path, monkeypatch):
    (tmp_path / "3").write_text(Path(week("v3")).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_harness_arg("3") == load_harness(week("v3"))
    assert load_harness_arg(week("v1")).content_hash() == load_harness(week("v1")).content_hash()


@pytest.mark.parametrize("arg,expected", [
    ("3", True), ("live-stream-avatar:12", True), ("v3.yaml", False), ("3.yaml", False),
    ("a:b", False), ("", False),
])
def test_version_ref_shape(arg, expected):
    assert is_version_ref(arg) is expected
