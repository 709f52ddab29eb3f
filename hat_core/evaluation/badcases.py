"""Bad cases: every failed evaluation case with its failure type, for review and retraining.

    sink = JsonlBadCaseSink("report.bad_cases.jsonl")
    get_suite("t2").run(policy, harness, bad_cases=sink)   # each failed case is added
    sink.close()

A `BadCaseRecord` is `{suite, case_id, scenario_id, variant_id, failure_type, failures,
reason, episode (messages + metadata), judge_scores, harness_hash}`. A `BadCaseSink` is
anything with `add(record)` and `close()`: the JSONL file here, `ListBadCaseSink` in memory,
`TeeBadCaseSink` for several at once. The sink that writes to the SQL store lives with the
command line (`hat_cli/badcase_sink.py`): hat_core imports nothing of `db`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from hat_core.evaluation.cases import CaseOutcome


@dataclass(frozen=True)
class BadCaseRecord:
    """One failed case: what failed, why, and the whole episode."""

    suite: str
    case_id: str
    scenario_id: str
    failure_type: str
    episode: dict
    judge_scores: dict
    failures: tuple[str, ...] = ()
    reason: str = ""
    variant_id: str | None = None
    harness_hash: str = ""
    metadata: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self) | {"failures": list(self.failures)}


def bad_case_of(outcome: CaseOutcome) -> BadCaseRecord | None:
    """The bad case of a failed outcome; None when it passed."""
    v = outcome.verdict
    if v.passed:
        return None
    episode = outcome.episode.to_dict() | {"scenario": outcome.scenario.to_dict()}
    variant = outcome.surface.variant
    metadata = {"group": outcome.group or None, "pool": outcome.surface.pool,
                "variant": variant.to_dict() if variant else None}
    return BadCaseRecord(
        suite=outcome.suite, case_id=outcome.case_id, scenario_id=outcome.scenario.id,
        failure_type=v.failure or "error", episode=episode,
        judge_scores={"judge": outcome.judge, **outcome.scores.rewards(),
                      "failures": list(v.failures), "reason": v.reason},
        failures=v.failures, reason=v.reason, variant_id=outcome.surface.variant_id,
        harness_hash=outcome.episode.harness_hash, metadata=metadata)


@runtime_checkable
class BadCaseSink(Protocol):
    """Where bad cases go."""

    def add(self, record: BadCaseRecord) -> None: ...

    def close(self) -> None: ...


class ListBadCaseSink:
    """Keeps bad cases in memory (`records`)."""

    def __init__(self) -> None:
        self.records: list[BadCaseRecord] = []

    def add(self, record: BadCaseRecord) -> None:
        self.records.append(record)

    def close(self) -> None:
        pass


class JsonlBadCaseSink:
    """Writes one JSON line per bad case; the file is created (empty) when the sink is."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")
        self.count = 0

    def add(self, record: BadCaseRecord) -> None:
        self.add_json(json.dumps(record.to_dict(), ensure_ascii=False))

    def add_json(self, line: str) -> None:
        """A bad case already written as one JSON line (copied from an earlier report)."""
        self._file.write(line.rstrip("\n") + "\n")
        self._file.flush()
        self.count += 1

    def close(self) -> None:
        self._file.close()


class TeeBadCaseSink:
    """Adds every bad case to each of several sinks."""

    def __init__(self, sinks: Iterable[BadCaseSink]):
        self.sinks = tuple(sinks)

    def add(self, record: BadCaseRecord) -> None:
        for sink in self.sinks:
            sink.add(record)

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()


def report_bad_cases(outcomes: Iterable[CaseOutcome], sink: BadCaseSink | None) -> int:
    """Add each failed outcome to `sink` (if any); how many failed."""
    n = 0
    for outcome in outcomes:
        record = bad_case_of(outcome)
        if record is not None:
            n += 1
            if sink is not None:
                sink.add(record)
    return n


def read_bad_cases(path: str | Path) -> list[dict]:
    """The rows of a bad-case JSONL file."""
    text = Path(path).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
