"""The suite contract: the `Suite` protocol every named suite follows and its `SuiteResult`.

A suite runs a model under a harness and returns headline metrics plus per-item rows. The
model is an `InferenceBackend` (`ifeval`, `tool_calls`) or, for the simulator suites (`t1`,
`t2`, `tool_robustness`, `prompt_robustness`, `cot_length`), any sim `Policy` too (a backend
is wrapped in `policy.BackendPolicy`). Every suite accepts `limit` and `max_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from hat_core.harness.model import Harness


@dataclass(frozen=True)
class SuiteResult:
    """A suite's headline metrics, its summary and one row per item."""

    suite: str
    metrics: dict[str, float]
    summary: dict = field(default_factory=dict)
    rows: tuple[dict, ...] = ()

    def to_dict(self, with_rows: bool = True) -> dict:
        out = {"suite": self.suite, "metrics": self.metrics, "summary": self.summary}
        return out | ({"rows": list(self.rows)} if with_rows else {})


@runtime_checkable
class Suite(Protocol):
    name: str

    def run(self, model, harness: Harness | None, **options) -> SuiteResult:
        """`model`: an `InferenceBackend`, or a sim `Policy` for the simulator suites."""
        ...
