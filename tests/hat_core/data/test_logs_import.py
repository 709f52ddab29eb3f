"""Real-log import: good rows become trajectories; every bad row is reported by line."""

from __future__ import annotations

import json

import pytest
from data_helpers import ROOT, tiny_config

from hat_core.data.build import build_from_logs
from hat_core.data.logs_import import import_logs
from hat_core.errors import ConfigError

SAMPLE = ROOT / "examples" / "logs" / "live_sample.jsonl"


def _rows() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def corrupted(tmp_path) -> tuple:
    """The sample with six broken rows; returns the file and {line: expected words}."""
    rows = [json.dumps(r, ensure_ascii=False) for r in _rows()[:10]]
    bad = {}

    def put(line: int, text: str, words: str) -> None:
        rows[line - 1] = text
        bad[line] = words

    put(2, '{"id": "x", "messages": [', "not JSON")
    r = _rows()[2]
    r["messages"][1]["tool_calls"][0]["function"]["name"] = "get_price_v9"
    put(3, json.dumps(r, ensure_ascii=False), "unknown tool 'get_price_v9'")
    r = _rows()[3]
    r["messages"][1]["tool_calls"][0]["function"]["arguments"] = '{"product_id": 1001}'
    put(4, json.dumps(r, ensure_ascii=False), "1001 is not of type 'string'")
    r = _rows()[4]
    r["harness_version"] = "v7"
    put(5, json.dumps(r, ensure_ascii=False), "ran under harness version 'v7'")
    r = _rows()[5]
    r["messages"][0]["role"] = "viewer"
    put(6, json.dumps(r, ensure_ascii=False), "role must be one of")
    r = _rows()[6]
    del r["messages"]
    put(7, json.dumps(r, ensure_ascii=False), "messages must be a non-empty list")
    path = tmp_path / "logs.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path, bad


def test_the_sample_imports_cleanly(harness):
    result = import_logs(SAMPLE, harness, accepted_versions=["v1"])
    assert result.problems == [] and len(result.trajectories) == result.rows_read == 30
    t = result.trajectories[0]
    assert t.source == "import" and t.messages[0]["role"] == "system"
    assert t.skill == "product_qa" and t.product_id == "P1001"


def test_a_corrupted_file_yields_a_report_naming_the_bad_rows(tmp_path, harness):
    path, bad = corrupted(tmp_path)
    result = import_logs(path, harness, accepted_versions=["v1"])
    assert result.bad_lines == [f"{path}:{n}" for n in sorted(bad)]
    for line, words in bad.items():
        messages = [p.message for p in result.problems if p.path == f"{path}:{line}"]
        assert any(words in m for m in messages), (line, messages)
    assert len(result.trajectories) == 10 - len(bad)  # nothing dropped silently
    assert result.rows_read == 10


def test_a_strict_import_refuses_the_file(tmp_path, harness):
    path, bad = corrupted(tmp_path)
    with pytest.raises(ConfigError) as err:
        build_from_logs(harness, tiny_config(), tmp_path / "out", path,
                        accepted_versions=["v1"], strict=True)
    assert len({p.path for p in err.value.problems}) == len(bad)
    assert not (tmp_path / "out").exists()


def test_a_lenient_import_writes_the_good_rows_and_returns_the_bad(tmp_path, harness):
    path, bad = corrupted(tmp_path)
    result, problems = build_from_logs(harness, tiny_config(), tmp_path / "out", path,
                                       accepted_versions=["v1"])
    assert len({p.path for p in problems}) == len(bad)
    assert sum(result.stats.splits.values()) == 10 - len(bad)
    assert result.manifest["status"] == "ready"


def test_a_hash_prefix_names_the_harness(tmp_path, harness):
    row = _rows()[0] | {"harness_version": harness.content_hash()[:10]}
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    assert import_logs(path, harness).problems == []
