"""Blessing gates: may a retrained checkpoint take the B slot (alias `challenger`)?

Pure: per-case rows in, verdicts out. Each quality gate compares the candidate with a
reference on the same cases, paired (`hat_core.release.evidence`): T1, T2 and the bad-case
rate against the champion, IFE-P against the base model. Each is a non-inferiority test: the
Bonett-Price 95% interval of the change (candidate - reference) passes when it lies above
-tolerance (the gate's margin), fails when the candidate loses more (the interval below it,
or a loss significant by McNemar's test and beyond it), and is inconclusive otherwise: too
few cases (`min_cases`), 0 against 0, or an interval that straddles the margin. So a
candidate passes where it is shown to lose less than the tolerance, a significant gain
included; with the default 0.02 that takes hundreds of cases. The latency gate passes when the
profile passed. The candidate's verdict is failed if any gate failed, else inconclusive if any
gate was, else passed; only a passed candidate becomes the challenger, and promoting any
other needs an admin's override with a reason (`hat_core.release.rules`). Every threshold
lives in `GateConfig` (`examples/configs/gates.yaml`).

**What is new.** When the harness adds scenario kinds over the previous version (`new_kinds`,
e.g. `("bundle",)` for v2 -> v3; `hat_core.sim.scenarios.new_kinds`), two checks join, on the
`new` suite's rows (`NEW_METRIC`): the candidate's gate `new`, candidate against champion
paired on the new cases with no tolerance (superiority: only significantly better passes),
and the zero-shot check's `new_floor`, the live model's pass rate on the new cases against
`zero_shot_min_new` by its Wilson interval (upper bound below the floor: failed; lower bound
at or above it: passed; straddling it: inconclusive, which also means retrain). The
zero-shot pairing of T1/T2 against the live model's own reference then leaves out the cases
of the new kinds, which its reference never had. Nothing new: neither check appears.

    config = load_gate_config("examples/configs/gates.yaml")
    results = evaluate_gates(candidate_rows, champion_rows, base_rows, latency_ok=True,
                             config=config)
    results.verdict, results.to_dict()

Rows are the suites' per-case rows (`<report>.cases.jsonl`); which `suite.metric` each gate
reads is configurable (`GateConfig.metrics`, a metric with a per-case outcome). A metric the
candidate was not measured on fails its gate; a reference without those cases makes the gate
inconclusive, each with the reason saying so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hat_core.config_file import MERGE, build_config, read_mapping
from hat_core.errors import Problem
from hat_core.evaluation.errors import EvalInputError
from hat_core.release.evidence import (
    case_outcomes,
    non_inferiority_evidence,
    outcome_of,
    paired_evidence,
    rate,
)
from hat_core.release.verdict import FAILED, INCONCLUSIVE, PASSED, VERDICTS

GATE_NAMES = ("t1", "t2", "ife_p", "bad_case_rate", "latency")
ZERO_SHOT_GATES = ("t1", "t2", "bad_case_rate")
DEFAULT_METRICS = {
    "t1": "t1.accuracy",
    "t2": "t2.accuracy",
    "ife_p": "ifeval.ife_p",
    "bad_case_rate": "t2.bad_case_rate",
}
NEW_METRIC = "new.accuracy"  # the `new` suite's per-case outcome (gate `new`, `new_floor`)
Rows = Sequence[Mapping[str, Any]]
IFE_P_REFERENCES = ("base", "champion")


@dataclass(frozen=True)
class GateConfig:
    """Thresholds of the blessing gates (tolerances and floors are shares in [0, 1])."""

    min_cases: int = 30  # fewer paired cases than this: inconclusive
    alpha: float = 0.05  # McNemar's p at or above this: inconclusive
    t1_tolerance: float = 0.02
    t2_tolerance: float = 0.02
    ife_p_margin: float = 0.05
    bad_case_tolerance: float = 0.0
    require_latency: bool = True
    zero_shot_min_t1: float = 0.0
    zero_shot_min_t2: float = 0.0
    zero_shot_margin: float = 0.05  # the zero-shot check: the most the new harness may cost
    zero_shot_min_new: float = 0.8  # the live model's pass rate on new kinds (Wilson)
    ife_p_reference: str = "base"  # IFE-P against the base model, or the live "champion"
    metrics: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_METRICS), metadata=MERGE)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class GateCheck:
    """One gate's verdict (`passed` / `failed` / `inconclusive`; `passed` is true only for the
    first), the candidate's value, what it was compared with (`threshold`: the reference's
    value, a floor, or the latency requirement), why, and the paired evidence."""

    name: str
    passed: bool
    value: float | bool | None
    threshold: float | bool | None
    reason: str
    verdict: str = ""  # "" -> from `passed` (gate results stored before verdicts existed)
    evidence: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.verdict:
            object.__setattr__(self, "verdict", PASSED if self.passed else FAILED)
        if self.verdict not in VERDICTS or self.passed != (self.verdict == PASSED):
            raise ValueError(f"gate {self.name}: verdict {self.verdict!r} with passed="
                             f"{self.passed}; verdicts: {', '.join(VERDICTS)}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class GateResults:
    """All gates of one candidate: failed if any gate failed, else inconclusive if any gate
    was (or none was checked), else passed."""

    checks: tuple[GateCheck, ...]

    @property
    def verdict(self) -> str:
        verdicts = {c.verdict for c in self.checks}
        if FAILED in verdicts:
            return FAILED
        return INCONCLUSIVE if INCONCLUSIVE in verdicts or not self.checks else PASSED

    @property
    def passed(self) -> bool:
        return self.verdict == PASSED

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks if c.verdict == FAILED)

    @property
    def inconclusive(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks if c.verdict == INCONCLUSIVE)

    def summary(self) -> str:
        """The gates that did not pass, by verdict: `t1_floor failed; t1, t2 inconclusive`."""
        parts = [f"{', '.join(names)} {what}" for names, what in
                 ((self.failed, FAILED), (self.inconclusive, INCONCLUSIVE)) if names]
        return "; ".join(parts) or ("all passed" if self.checks else "no gate checked")

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "verdict": self.verdict,
                "gates": {c.name: c.to_dict() for c in self.checks}}

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
              "zero_shot_min_t1", "zero_shot_min_t2", "zero_shot_margin", "zero_shot_min_new")
    problems = [Problem(f"{where}.{key}", f"must be a number in [0, 1], got {value!r}")
                for key in shares if not 0 <= (value := getattr(config, key)) <= 1]
    if config.min_cases < 1:
        problems.append(Problem(f"{where}.min_cases", "must be a whole number of cases >= 1, "
                                                      f"got {config.min_cases!r}"))
    if config.ife_p_reference not in IFE_P_REFERENCES:
        problems.append(Problem(f"{where}.ife_p_reference", "must be one of "
                                f"{', '.join(IFE_P_REFERENCES)}, got {config.ife_p_reference!r}"))
    if not 0 < config.alpha < 1:
        problems.append(Problem(f"{where}.alpha", "must be a significance level in (0, 1), "
                                                  f"e.g. 0.05; got {config.alpha!r}"))
    for gate, key in config.metrics.items():
        try:
            outcome_of(key)
        except ValueError as exc:
            problems.append(Problem(f"{where}.metrics.{gate}", str(exc)))
    return problems


def evaluate_gates(
    candidate: Rows,
    champion: Rows | None,
    base: Rows | None,
    latency_ok: bool | None,
    config: GateConfig,
    new_kinds: Sequence[str] = (),
) -> GateResults:
    """Judge a candidate's per-case rows against the champion's (T1, T2, bad cases) and the
    base model's (IFE-P) on the same cases, and its latency profile (`None`: not measured,
    which fails when `require_latency`). With `new_kinds`, also the gate `new` (see the
    module docstring)."""
    checks = (
        _non_inferior("t1", candidate, champion, config.t1_tolerance, config),
        _non_inferior("t2", candidate, champion, config.t2_tolerance, config),
        _non_inferior("ife_p", candidate, base, config.ife_p_margin, config),
        _non_inferior("bad_case_rate", candidate, champion, config.bad_case_tolerance, config),
        _latency(latency_ok, config),
    )
    if new_kinds:
        checks += (_paired("new", candidate, champion, 0.0, config, NEW_METRIC),)
    return GateResults(checks)


def evaluate_zero_shot(current: Rows, reference: Rows | None, config: GateConfig,
                       new_kinds: Sequence[str] = ()) -> GateResults:
    """Does the live model cope with a new harness? Its per-case rows on the new harness
    against its own reference rows (the cases of its registration's evaluation), paired, as a
    non-inferiority test (`hat_core.release.evidence.non_inferiority_evidence`): T1, T2 and
    the bad-case rate each pass when the interval of the change lies above
    -`zero_shot_margin`, fail when it lies below, and are inconclusive otherwise (and at 0
    against 0). When configured (`zero_shot_min_t1/t2` > 0), also T1 and T2 on the new harness
    at least at those floors: a live model that scores as badly on the new harness as on the
    old one does not cope either. With `new_kinds`, the pairing leaves their cases out and
    `new_floor` joins (see the module docstring). Only `passed` means "no retrain needed"."""
    old = [r for r in current if r.get("kind") not in new_kinds] if new_kinds else current
    checks = [_non_inferior(name, old, reference, config.zero_shot_margin, config,
                            who="the new harness")
              for name in ("t1", "t2", "bad_case_rate")]
    for name, floor in (("t1", config.zero_shot_min_t1), ("t2", config.zero_shot_min_t2)):
        if floor > 0:
            checks.append(_at_least(name, current, floor, config))
    if new_kinds:
        checks.append(_new_floor(current, config.zero_shot_min_new, new_kinds))
    return GateResults(tuple(checks))


def _non_inferior(name: str, current: Rows, reference: Rows | None, margin: float,
                  config: GateConfig, who: str = "the candidate") -> GateCheck:
    key = config.metrics[name]
    value, why = _measured(current, key)
    if value is None:
        return GateCheck(name, False, None, None, f"{who}: {why}", FAILED)
    ref, why = _measured(reference, key)
    if ref is None:
        return GateCheck(name, False, value, None, f"reference: {why}; nothing to pair with",
                         INCONCLUSIVE)
    ev = non_inferiority_evidence(current, reference or (), outcome_of(key),
                                  margin=margin, min_cases=config.min_cases,
                                  alpha=config.alpha, who=who)
    return GateCheck(name, ev.verdict == PASSED, value, ref, ev.reason, ev.verdict,
                     ev.to_dict())


def _measured(rows: Rows | None, key: str) -> tuple[float | None, str]:
    """The metric over `rows` and, when it cannot be read, why."""
    try:
        value = rate(rows or (), outcome_of(key))
    except EvalInputError as exc:
        return None, str(exc)
    return value, "" if value is not None else f"{key} was not measured (no case rows)"


def _paired(name: str, candidate: Rows, reference: Rows | None, tolerance: float,
            config: GateConfig, key: str | None = None) -> GateCheck:
    key = key or config.metrics[name]
    value, why = _measured(candidate, key)
    if value is None:
        return GateCheck(name, False, None, None, f"candidate: {why}", FAILED)
    ref, why = _measured(reference, key)
    if ref is None:
        return GateCheck(name, False, value, None, f"reference: {why}; nothing to pair with",
                         INCONCLUSIVE)
    ev = paired_evidence(candidate, reference or (), outcome_of(key), tolerance=tolerance,
                         min_cases=config.min_cases, alpha=config.alpha)
    return GateCheck(name, ev.verdict == PASSED, value, ref, ev.reason, ev.verdict,
                     ev.to_dict())


def _at_least(name: str, rows: Rows, floor: float, config: GateConfig) -> GateCheck:
    key = config.metrics[name]
    value, why = _measured(rows, key)
    if value is None:
        return GateCheck(f"{name}_floor", False, None, floor, why, FAILED)
    passed = value >= floor
    relation = ">=" if passed else "<"
    return GateCheck(f"{name}_floor", passed, value, floor,
                     f"{key} {value:.3f} {relation} the floor {floor:.3f}")


def _new_floor(rows: Rows, floor: float, kinds: Sequence[str]) -> GateCheck:
    """The live model's pass rate on the new kinds' cases against `floor`, by its interval."""
    from hat_core.evaluation.call_metrics import wilson

    cases = [c["passed"] for c in case_outcomes(rows, outcome_of(NEW_METRIC))]
    what = f"{NEW_METRIC} on the new kinds {', '.join(kinds)}"
    if not cases:
        return GateCheck("new_floor", False, None, floor, f"{what}: not measured (no case "
                         "rows): nothing shows the live model copes", INCONCLUSIVE)
    value = sum(cases) / len(cases)
    lo, hi = wilson(sum(cases), len(cases))
    evidence = {"n": len(cases), "interval": [lo, hi], "new_kinds": list(kinds)}
    shown = f"{what} {value:.3f} on {len(cases)} cases (95% interval {lo:.3f}-{hi:.3f})"
    if hi < floor:
        return GateCheck("new_floor", False, value, floor, f"{shown}: below the floor "
                         f"{floor:.3f}", FAILED, evidence)
    if lo >= floor:
        return GateCheck("new_floor", True, value, floor, f"{shown}: at or above the floor "
                         f"{floor:.3f}", PASSED, evidence)
    return GateCheck("new_floor", False, value, floor, f"{shown}: straddles the floor "
                     f"{floor:.3f}", INCONCLUSIVE, evidence)


def _latency(latency_ok: bool | None, config: GateConfig) -> GateCheck:
    if latency_ok is None:
        ok = not config.require_latency
        why = "latency was not measured" + ("" if ok else " and the config requires it")
        return GateCheck("latency", ok, None, config.require_latency, why)
    why = "the latency profile passed" if latency_ok else "the latency profile failed"
    return GateCheck("latency", latency_ok, latency_ok, True, why)
