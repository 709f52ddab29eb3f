"""`hat sim run|show` through the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HAT = str(Path(sys.executable).parent / "hat")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HAT, "sim", *args], capture_output=True, text=True, timeout=120)


def test_run_prints_pass_rate_rewards_and_failures(v1_path):
    result = run("run", "--harness", str(v1_path), "--episodes", "30", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert "pass rate           1.000" in result.stdout
    assert "tool_rationality    1.000" in result.stdout
    assert "wrong_tool          0" in result.stdout


def test_run_json(v1_path):
    result = run("run", "--harness", str(v1_path), "--policy", "random", "--episodes", "20",
                 "--seed", "2", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["episodes"] == 20 and data["pass_rate"] < 1
    assert set(data["rewards"]) == {"accuracy", "effectiveness", "tool_rationality",
                                    "skill_selection", "cot_length_penalty"}
    assert sum(data["failures"].values()) == round(20 * (1 - data["pass_rate"]))


def test_show_prints_one_trajectory(v1_path):
    result = run("show", "--harness", str(v1_path), "--seed", "1", "--episode", "4")
    assert result.returncode == 0, result.stderr
    assert "scenario s00004-price_coupon" in result.stdout
    assert "-> list_coupons(" in result.stdout and "-> calc_final_price(" in result.stdout
    assert "verdict  pass" in result.stdout


def test_bad_harness_and_bad_policy_exit_2(tmp_path, v1_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("harness: x\n", encoding="utf-8")
    result = run("run", "--harness", str(bad))
    assert result.returncode == 2 and "invalid harness" in result.stderr
    result = run("run", "--harness", str(v1_path), "--policy", "genius")
    assert result.returncode == 2 and "valid: oracle" in result.stderr
