"""`hat harness validate|render` through the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

HAT = str(Path(sys.executable).parent / "hat")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HAT, *args], capture_output=True, text=True, timeout=120)


def test_validate_accepts_every_example(examples_dir):
    for path in sorted(examples_dir.glob("v*.yaml")):
        result = run("harness", "validate", str(path))
        assert result.returncode == 0, result.stderr
        assert "valid harness 'live-stream-avatar'" in result.stdout


def test_validate_lists_every_error_and_exits_2(tmp_path, v1_path):
    data = yaml.safe_load(v1_path.read_text(encoding="utf-8"))
    data["skills"][1]["tools"][0] = "get_price"
    data["hooks"][0]["event"] = "after_everything"
    data["tools"][2]["parameters"]["properties"]["height_cm"]["type"] = "int"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    result = run("harness", "validate", str(bad))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "(3 problems)" in result.stderr
    assert "skills[1].tools[0]: unknown tool 'get_price'" in result.stderr
    assert "hooks[0].event: unknown hook event 'after_everything'" in result.stderr
    assert "tools[2].parameters.properties.height_cm.type: invalid JSON Schema" in result.stderr


def test_validate_missing_file_exits_2(tmp_path):
    result = run("harness", "validate", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2 and "no such harness file" in result.stderr
    assert "Traceback" not in result.stderr


def test_render_json(v1_path):
    result = run("harness", "render", str(v1_path), "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["system_prompt"].startswith("## 角色\n")
    assert len(payload["tools"]) == 12
