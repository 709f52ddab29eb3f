"""Evaluation reports written and read back (`write_report`, `read_eval_report`)."""

from __future__ import annotations

import json

import pytest

from hat_core.evaluation.report import EvalReport, read_eval_report, write_report
from hat_core.evaluation.suites.base import SuiteResult


def a_report() -> EvalReport:
    rows = ({"case": "t1-0", "passed": True, "first_call_exact": False},
            {"case": "t1-1", "passed": False, "first_call_exact": False})
    return EvalReport("runs/m/sft", "abc123", (
        SuiteResult("t1", {"accuracy": 0.5}, {"episodes": 2}, rows),
        SuiteResult("ifeval", {"prompt_strict": 1.0}, {}, ())),
        judge={"judge": "llm", "model": "teacher"})


def test_a_written_report_reads_back_equal_with_its_rows(tmp_path):
    report = a_report()
    out, md = write_report(report, tmp_path / "eval" / "report.json")
    assert md.is_file()
    assert read_eval_report(out) == report


@pytest.mark.parametrize("text", [
    "",                                                   # created, nothing written yet
    '{"model": "m", "harness_hash": "h", "suites": [{"sui',   # a write cut short
    json.dumps({"model": "m", "suites": [{"metrics": {}}]}),  # a suite without its name
    json.dumps(["not", "a", "report"]),
    json.dumps({"endpoint": "http://x", "levels": []}),    # a latency report
])
def test_what_is_not_a_whole_eval_report_reads_as_none(tmp_path, text):
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    assert read_eval_report(path) is None


def test_a_missing_report_reads_as_none(tmp_path):
    assert read_eval_report(tmp_path / "nothing.json") is None
