"""Blessing gates: may a retrained checkpoint take the B slot (alias `challenger`)?

Pure: metrics in, verdicts out. A candidate passes when T1 and T2 are not worse than the
champion's beyond a tolerance, IFE-P is not below the base model's by more than a margin,
the bad-case rate is not higher than the champion's (plus a tolerance), and the latency
profile passed. Every threshold lives in `GateConfig` (`examples/configs/gates.yaml`).

    config = load_gate_config("examples/configs/gates.yaml")
    results = evaluate_gates(candidate, champion, base, latency_ok=True, config=config)
    results.passed, results.to_dict()

Metrics are flat mappings `"suite.metric" -> value` (e.g. `"t1.accuracy"`); which key each
gate reads is configurable (`GateConfig.metrics`). A metric that was not measured fails its
gate, with the reason saying so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hat_core.config_file import MERGE, build_config, read_mapping
from hat_core.errors import Problem

GATE_NAMES = ("t1", "t2", "ife_p", "bad_case_rate", "latency")
ZERO_SHOT_GATES = ("t1", "t2", "bad_case_rate")
DEFAULT_METRICS = {
    "t1": "t1.accuracy",
    "t2": "t2.accuracy",
    "ife_p": "ifeval.ife_p",
    "bad_case_rate": "t2.bad_case_rate",
}


@dataclass(frozen=True)
class GateConfig:
    """Thresholds of the blessing gates (all shares in [0, 1])."""

    t1_tolerance: float = 0.02
    t2_tolerance: float = 0.02
    ife_p_margin: float = 0.05
    bad_case_tolerance: float = 0.0
    require_latency: bool = True
    zero_shot_min_t1: float = 0.0
    zero_shot_min_t2: float = 0.0
    metrics: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_METRICS), metadata=MERGE)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class GateCheck:
    """One gate's verdict: the measured value, what it was compared with, and why."""

    name: str
    passed: bool
    value: float | bool | None
    threshold: float | bool | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class GateResults:
    """All gates of one candidate; `passed` only when every gate passed."""

    checks: tuple[GateCheck, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks if not c.passed)

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "gates": {c.name: c.to_dict() for c in self.checks}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GateResults:
        """The inverse of `to_dict` (what the store keeps with a model version)."""
        return cls(tuple(GateCheck(**g) for g in data.get("gates", {}).values()))


def gate_config_from_dict(data: Mapping[str, Any] | None, where: str = "gates") -> GateConfig:
    """A `GateConfig` from a mapping; unknown keys or bad values raise `ConfigError`
    listing every problem and the valid keys (`metrics` merges onto `DEFAULT_METRICS`)."""
    return build_config(GateConfig, {} if data is None else data, kind="gate", source=where,
                        prefix=where, checks=lambda c: _value_problems(c, where))


def load_gate_config(path: str | Path) -> GateConfig:
    """Read a gate config YAML file (see `examples/configs/gates.yaml`)."""
    return gate_config_from_dict(read_mapping(path, what="gate config"), where=str(path))


def _value_problems(config: GateConfig, where: str) -> list[Problem]:
    shares = ("t1_tolerance", "t2_tolerance", "ife_p_margin", "bad_case_tolerance",
              "zero_shot_min_t1", "zero_shot_min_t2")
    return [Problem(f"{where}.{key}", f"must be a number in [0, 1], got {value!r}")
            for key in shares if not 0 <= (value := getattr(config, key)) <= 1]


def evaluate_gates(
    candidate_metrics: Mapping[str, float],
    champion_metrics: Mapping[str, float],
    base_metrics: Mapping[str, float],
    latency_ok: bool | None,
    config: GateConfig,
) -> GateResults:
    """Judge a candidate against the champion (T1, T2, bad cases), the base (IFE-P) and its
    latency profile (`None`: not measured, which fails when `require_latency`)."""
    checks = (
        _not_worse("t1", candidate_metrics, champion_metrics, config.t1_tolerance, config),
        _not_worse("t2", candidate_metrics, champion_metrics, config.t2_tolerance, config),
        _not_worse("ife_p", candidate_metrics, base_metrics, config.ife_p_margin, config),
        _not_higher("bad_case_rate", candidate_metrics, champion_metrics,
                    config.bad_case_tolerance, config),
        _latency(latency_ok, config),
    )
    return GateResults(checks)


def evaluate_zero_shot(
    current_metrics: Mapping[str, float],
    reference_metrics: Mapping[str, float],
    config: GateConfig,
) -> GateResults:
    """Does the live model cope with a new harness? Its T1, T2 and bad-case rate on the new
    harness against its own reference numbers, with the same tolerances (its weights, hence
    IFE-P and latency, are unchanged), and, when configured (`zero_shot_min_t1/t2` > 0), T1
    and T2 on the new harness at least at those floors: a live model that scores as badly on
    the new harness as on the old one does not cope either."""
    checks = [
        _not_worse("t1", current_metrics, reference_metrics, config.t1_tolerance, config),
        _not_worse("t2", current_metrics, reference_metrics, config.t2_tolerance, config),
        _not_higher("bad_case_rate", current_metrics, reference_metrics,
                    config.bad_case_tolerance, config),
    ]
    for name, floor in (("t1", config.zero_shot_min_t1), ("t2", config.zero_shot_min_t2)):
        if floor > 0:
            checks.append(_at_least(name, current_metrics, floor, config))
    return GateResults(tuple(checks))


def _at_least(name: str, metrics: Mapping[str, float], floor: float,
              config: GateConfig) -> GateCheck:
    key = config.metrics[name]
    value = metrics.get(key)
    if value is None:
        return GateCheck(f"{name}_floor", False, None, floor, f"{key} was not measured")
    passed = value >= floor
    relation = ">=" if passed else "<"
    return GateCheck(f"{name}_floor", passed, value, floor,
                     f"{key} {value:.3f} {relation} the floor {floor:.3f}")


def _values(name: str, candidate: Mapping[str, float], reference: Mapping[str, float],
            config: GateConfig) -> tuple[float | None, float | None, str]:
    key = config.metrics[name]
    return candidate.get(key), reference.get(key), key


def _missing(name: str, key: str, value: float | None, ref: float | None) -> GateCheck | None:
    if value is None:
        return GateCheck(name, False, None, None, f"{key} was not measured for the candidate")
    if ref is None:
        return GateCheck(name, False, value, None, f"{key} has no reference value")
    return None


def _not_worse(name: str, candidate: Mapping[str, float], reference: Mapping[str, float],
               tolerance: float, config: GateConfig) -> GateCheck:
    value, ref, key = _values(name, candidate, reference, config)
    missing = _missing(name, key, value, ref)
    if missing:
        return missing
    threshold = ref - tolerance
    ok = value >= threshold - 1e-12
    verdict = "not below" if ok else "below"
    return GateCheck(name, ok, value, threshold,
                     f"{key} {value:.4f} is {verdict} {ref:.4f} - {tolerance} = {threshold:.4f}")


def _not_higher(name: str, candidate: Mapping[str, float], reference: Mapping[str, float],
                tolerance: float, config: GateConfig) -> GateCheck:
    value, ref, key = _values(name, candidate, reference, config)
    missing = _missing(name, key, value, ref)
    if missing:
        return missing
    threshold = ref + tolerance
    ok = value <= threshold + 1e-12
    verdict = "not above" if ok else "above"
    return GateCheck(name, ok, value, threshold,
                     f"{key} {value:.4f} is {verdict} {ref:.4f} + {tolerance} = {threshold:.4f}")


def _latency(latency_ok: bool | None, config: GateConfig) -> GateCheck:
    if latency_ok is None:
        ok = not config.require_latency
        why = "latency was not measured" + ("" if ok else " and the config requires it")
        return GateCheck("latency", ok, None, config.require_latency, why)
    why = "the latency profile passed" if latency_ok else "the latency profile failed"
    return GateCheck("latency", latency_ok, latency_ok, True, why)
