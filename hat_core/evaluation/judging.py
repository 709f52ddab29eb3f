"""Which judge scores the evaluation's simulator cases, and the judge gate before an LLM one.

    config = JudgeConfig(kind="llm", base_url="http://vllm:8000/v1", model="judge")
    decision = gate_decision(config, calibration, min_kappa=0.6, min_n=100)
    require_allowed(decision)        # JudgeGateError (kappa, n, thresholds, the fix) if refused
    judge = make_judge(config)       # None: the rule judge (verdicts from the computed scores)

The rule judge reads the simulator's ground truth and needs no calibration. An LLM judge may
stand in for it only when the store's calibration against human labels (`calibration`, from
`db.calibration_repo.judge_calibration` on `config.source`) passes
`hat_core.evidence.calibration.calibration_gate`: Cohen's kappa at least `min_kappa` on at least
`min_n` labelled items. An `override` reason lets a refused judge through; the decision keeps
the reason, and the entry point records it (MLflow params, the audit log).
`decision.params()` are the MLflow params that say which judge scored a run.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

from hat_core.errors import ConfigError, Problem
from hat_core.evaluation.errors import JudgeGateError
from hat_core.sim.judge import Calibration, Judge, LLMJudge

JUDGE_KINDS = ("rule", "llm")
CALIBRATION_SOURCES = ("bad_cases", "pairwise")  # `db.calibration_repo.SOURCES`


@dataclass(frozen=True)
class JudgeConfig:
    """The judge of the simulator suites; `source`: the calibration the gate reads."""

    kind: str = "rule"
    base_url: str | None = None  # llm: an OpenAI-compatible endpoint (`.../v1`)
    model: str | None = None  # llm: the model name at the endpoint
    api_key_env: str | None = None  # name of the variable that holds the API key
    timeout_s: float = 30.0
    source: str = "bad_cases"

    def problems(self, where: str = "judge") -> list[Problem]:
        """Every problem of this config, each naming the valid options."""
        if self.kind not in JUDGE_KINDS:
            return [Problem(f"{where}.kind", f"unknown judge {self.kind!r}; valid: "
                            + ", ".join(JUDGE_KINDS))]
        out = []
        if self.kind == "llm" and not (self.base_url and self.model):
            out.append(Problem(f"{where}.base_url", "the llm judge needs base_url and model "
                               "(an OpenAI-compatible endpoint and its model name)"))
        if self.source not in CALIBRATION_SOURCES:
            out.append(Problem(f"{where}.source", f"unknown calibration source {self.source!r}"
                               "; valid: " + ", ".join(CALIBRATION_SOURCES)))
        return out


def check_judge_config(config: JudgeConfig, where: str = "judge") -> JudgeConfig:
    """`config`, or a `ConfigError` listing every problem."""
    problems = config.problems(where)
    if problems:
        raise ConfigError(f"invalid judge config ({where})", problems)
    return config


def make_judge(config: JudgeConfig) -> Judge | None:
    """The judge a config names; None for the rule judge."""
    if check_judge_config(config).kind == "rule":
        return None
    key = os.environ.get(config.api_key_env) if config.api_key_env else None
    return LLMJudge(config.base_url or "", config.model or "", api_key=key,
                    timeout_s=config.timeout_s)


def judge_name(judge: Judge | None) -> str:
    """How a case's verdict names its judge: `rule`, or `llm:<model>`."""
    if judge is None:
        return "rule"
    model = getattr(judge, "model", None)
    return f"llm:{model}" if isinstance(judge, LLMJudge) else (model or type(judge).__name__)


@dataclass(frozen=True)
class JudgeDecision:
    """May this judge score an evaluation? The gate's numbers, verdict and any override."""

    judge: str
    model: str | None
    source: str | None
    n: int
    kappa: float | None
    min_kappa: float
    min_n: int
    passed: bool
    reason: str
    override: str | None = None

    @property
    def allowed(self) -> bool:
        return self.passed or bool(self.override)

    def to_dict(self) -> dict:
        return asdict(self) | {"allowed": self.allowed}

    def params(self) -> dict[str, str]:
        """MLflow params: which judge scored the run, on what calibration, and the verdict."""
        gate = "n/a" if self.judge == "rule" else "pass" if self.passed else "fail"
        out = {"judge": self.judge, "judge.gate": gate, "judge.reason": self.reason}
        if self.judge == "rule":
            return out
        return out | {"judge.model": self.model or "-", "judge.source": self.source or "-",
                      "judge.kappa": "-" if self.kappa is None else f"{self.kappa:.4f}",
                      "judge.n": str(self.n), "judge.min_kappa": str(self.min_kappa),
                      "judge.min_n": str(self.min_n), "judge.override": self.override or "-"}

    def refusal(self) -> str:
        """Why the gate refuses, the numbers against the thresholds, and how to fix it."""
        kappa = "none" if self.kappa is None else f"{self.kappa:.3f}"
        fix = ("label more bad cases in the console's bad-case review"
               if self.source == "bad_cases" else
               "close pairwise reviews whose items carry judge verdicts")
        return (f"the judge gate refuses the LLM judge {self.model}: {self.reason}. "
                f"Calibration on {self.source}: kappa {kappa}, n {self.n}; the gate needs "
                f"kappa >= {self.min_kappa} on n >= {self.min_n} labelled items "
                "(HAT_JUDGE_MIN_KAPPA, HAT_JUDGE_MIN_ITEMS). To fix: " + fix +
                " until the console's Judge calibration page shows the gate passed, or "
                "evaluate with the rule judge (`--judge rule`, `eval.judge: rule`). "
                "Nothing was evaluated or stored.")


def rule_decision() -> JudgeDecision:
    """The rule judge: always allowed, nothing to calibrate."""
    return JudgeDecision("rule", None, None, 0, None, 0.0, 0, True,
                         "the rule judge reads the simulator's ground truth")


def gate_decision(config: JudgeConfig, calibration: Calibration | None, *,
                  min_kappa: float, min_n: int, override: str | None = None) -> JudgeDecision:
    """The gate on `calibration` (None: no labelled pairs) for the judge `config` names."""
    if check_judge_config(config).kind == "rule":
        return rule_decision()
    if calibration is None:
        passed, reason = False, f"no {config.source} items with both a judge and a human label"
    else:
        from hat_core.evidence.calibration import calibration_gate

        passed, reason = calibration_gate(calibration, min_kappa=min_kappa, min_n=min_n)
    return JudgeDecision(config.kind, config.model, config.source,
                         calibration.n if calibration else 0,
                         calibration.kappa if calibration else None, min_kappa, min_n, passed,
                         reason, None if passed else (override or "").strip() or None)


def require_allowed(decision: JudgeDecision) -> JudgeDecision:
    """`decision` when the judge may be used; `JudgeGateError` with the fix otherwise."""
    if not decision.allowed:
        raise JudgeGateError(decision.refusal())
    return decision
