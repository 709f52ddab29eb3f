"""Evaluation reports: one JSON document plus a markdown summary beside it.

`write_report(report, "report.json")` writes `report.json` and `report.md`;
`read_eval_report("report.json")` reads an evaluation report back. Latency reports
(`latency.LatencyReport`) have their own markdown table (`latency_markdown`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from hat_core.latency.measure import LatencyReport

if TYPE_CHECKING:
    from hat_core.evaluation.suites.base import SuiteResult


@dataclass(frozen=True)
class EvalReport:
    """The results of several suites for one model and harness."""

    model: str
    harness_hash: str | None
    suites: tuple[SuiteResult, ...]
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    judge: dict | None = None  # the judge gate's decision when an LLM judge scored the cases

    def to_dict(self) -> dict:
        out = {"model": self.model, "harness_hash": self.harness_hash,
               "created_at": self.created_at, "suites": [s.to_dict() for s in self.suites]}
        return out | ({"judge": self.judge} if self.judge else {})


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "-" if value is None else str(value)


def eval_markdown(report: EvalReport) -> str:
    """One line per suite metric."""
    lines = [f"# Evaluation of {report.model}", "",
             f"harness {report.harness_hash or '-'}; {report.created_at}"
             + (f"; judge {report.judge['judge']} {report.judge['model']}" if report.judge
                else ""), "",
             "| suite | metric | value |", "|---|---|---|"]
    for suite in report.suites:
        lines += [f"| {suite.suite} | {k} | {_fmt(v)} |" for k, v in suite.metrics.items()]
    return "\n".join(lines) + "\n"


def latency_markdown(report: LatencyReport) -> str:
    """Per-level percentiles (seconds) and the profile's gates."""
    lines = [f"# Latency of {report.model}", "",
             f"endpoint {report.endpoint}; profile {report.profile}; max_tokens "
             f"{report.max_tokens}; percentiles: nearest rank", "",
             "| concurrency | requests | errors | e2e P50 | P95 | P99 | max | TTFT P50 | P95 "
             "| tok/s P50 |", "|---|---|---|---|---|---|---|---|---|---|"]
    for lv in report.levels:
        cells = [lv.concurrency, lv.requests, lv.errors, lv.e2e.p50, lv.e2e.p95, lv.e2e.p99,
                 lv.e2e.max, lv.ttft.p50, lv.ttft.p95, lv.tokens_per_s.p50]
        lines.append("| " + " | ".join(_fmt(c) for c in cells) + " |")
    lines += ["", "| gate | value | result |", "|---|---|---|"]
    lines += [f"| {g.gate.describe()} | {_fmt(g.value)} | {'pass' if g.passed else 'FAIL'} |"
              for g in report.gates]
    return "\n".join(lines) + "\n"


def write_report(report: EvalReport | LatencyReport, out: str | Path) -> tuple[Path, Path]:
    """Write `out` (JSON) and the markdown summary with the same stem; return both paths."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n",
                   encoding="utf-8")
    md = out.with_suffix(".md")
    text = latency_markdown(report) if isinstance(report, LatencyReport) \
        else eval_markdown(report)
    md.write_text(text, encoding="utf-8")
    return out, md


def read_eval_report(path: str | Path) -> EvalReport | None:
    """The evaluation report `write_report` wrote at `path`, with its rows; None when there is
    no file or it cannot be read as one (a write cut short by a killed job, another JSON)."""
    from hat_core.evaluation.suites.base import SuiteResult

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        suites = tuple(SuiteResult(s["suite"], s["metrics"], s.get("summary", {}),
                                   tuple(s.get("rows", ()))) for s in data["suites"])
        return EvalReport(data["model"], data.get("harness_hash"), suites,
                          data.get("created_at", ""), data.get("judge"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
