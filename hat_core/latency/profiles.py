"""Latency gate profiles: limits on the measured statistics, by name.

A `Gate` bounds one statistic (`p50, p95, p99, max, mean`) of one metric (`e2e` seconds,
`ttft` seconds, `tokens_per_s` lower bound) at one concurrency level, or the error rate.
`PROFILES` holds the built-in ones; `h20` is the production target on one H20 GPU.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from hat_core.errors import ConfigError, Problem

STATS = ("p50", "p95", "p99", "max", "mean")
METRICS = ("e2e", "ttft", "tokens_per_s", "error_rate")


@dataclass(frozen=True)
class Gate:
    """`metric`'s `stat` at `concurrency` must be <= `limit` (>= for `tokens_per_s`)."""

    concurrency: int
    metric: str
    stat: str
    limit: float

    def describe(self) -> str:
        op = ">=" if self.metric == "tokens_per_s" else "<="
        what = self.metric if self.metric == "error_rate" else f"{self.metric} {self.stat}"
        return f"concurrency {self.concurrency}: {what} {op} {self.limit}"


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    gates: tuple[Gate, ...]


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    value: float | None
    passed: bool

    def to_dict(self) -> dict:
        return {**asdict(self.gate), "value": self.value, "passed": self.passed,
                "gate": self.gate.describe()}


def _slo(concurrency: int, p50: float, p95: float, worst: float) -> tuple[Gate, ...]:
    return (Gate(concurrency, "e2e", "p50", p50), Gate(concurrency, "e2e", "p95", p95),
            Gate(concurrency, "e2e", "max", worst), Gate(concurrency, "error_rate", "mean", 0.0))


PROFILES: dict[str, Profile] = {
    "h20": Profile("h20", "production target: one H20 GPU serving the compact model with vLLM",
                   _slo(1, 3.5, 8.2, 15.0)),
    "cpu-tiny": Profile("cpu-tiny", "embedded default: the tiny model under transformers serve "
                        "on a 2-core CPU (generous; catches a broken or hung server)",
                        _slo(1, 30.0, 60.0, 120.0)),
}


def get_profile(name: str) -> Profile:
    """The profile called `name`; an unknown name raises `ConfigError` listing valid ones."""
    if name not in PROFILES:
        raise ConfigError(f"unknown latency profile {name!r}",
                          [Problem("profile", f"valid profiles: {', '.join(PROFILES)}")])
    return PROFILES[name]


def check_gate(gate: Gate, value: float | None) -> GateResult:
    """A gate whose level or statistic was not measured fails."""
    if value is None:
        return GateResult(gate, None, False)
    ok = value >= gate.limit if gate.metric == "tokens_per_s" else value <= gate.limit
    return GateResult(gate, value, ok)
