"""Named evaluation suites: the `Suite` protocol, `SuiteResult` and the `SUITES` registry.

A suite runs a model under a harness and returns headline metrics plus per-item rows. The
model is an `InferenceBackend` (`ifeval`, `tool_calls`) or, for the simulator suites (`t1`,
`t2`, `tool_robustness`, `prompt_robustness`, `cot_length`), any sim `Policy` too (a backend
is wrapped in `policy.BackendPolicy`). Every suite accepts `limit` and `max_tokens`.
Register more with `register(suite)`; `get_suite(name)` lists the valid names when a name is
unknown. `evaluate.evaluate(...)` runs several at once (T1 cases shared with `t2` and
`cot_length`).

    result = get_suite("ifeval").run(backend, None, nltk_data=Path("nltk_data"), limit=20)
    result = get_suite("t2").run(OraclePolicy(), harness, episodes=30, variants=4)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from hat_core.errors import ConfigError, Problem
from hat_core.evaluation import ifeval
from hat_core.evaluation.ifeval_checker import load_splitter
from hat_core.evaluation.inference import InferenceBackend
from hat_core.harness import Harness

DEFAULT_IFEVAL_SET = Path(__file__).resolve().parents[2] / "examples" / "ifeval" / \
    "hat_ifeval_small.jsonl"


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


@dataclass(frozen=True)
class IfevalSuite:
    """IFEval-format prompts sent as single user turns (no harness), scored by the official
    checker. Options: `prompts` (a JSONL path), `nltk_data`, `limit`, `max_tokens`."""

    name: str = "ifeval"
    prompts: Path = DEFAULT_IFEVAL_SET
    max_tokens: int = 512

    def run(self, model: InferenceBackend, harness: Harness | None = None, *,
            prompts: Path | None = None, nltk_data: Path | None = None,
            limit: int | None = None, max_tokens: int | None = None) -> SuiteResult:
        from hat_core.evaluation.policy import backend_of

        model = backend_of(model) or model  # a BackendPolicy answers through its backend
        items = ifeval.load_prompts(prompts or self.prompts)[:limit]
        tokens = max_tokens or self.max_tokens
        answers = {p.key: model.chat([{"role": "user", "content": p.prompt}],
                                     max_tokens=tokens).content for p in items}
        result = ifeval.score(items, ifeval.Responses(answers, ()), load_splitter(nltk_data))
        s = result.summary
        metrics = {"ife_p": s.prompt_strict, "prompt_loose": s.prompt_loose,
                   "instruction_strict": s.instruction_strict,
                   "instruction_loose": s.instruction_loose}
        rows = tuple(v.to_dict() | {"response": answers[v.key]} for v in result.verdicts)
        return SuiteResult(self.name, metrics, s.to_dict(), rows)


SUITES: dict[str, Suite] = {"ifeval": IfevalSuite()}


def register(suite: Suite) -> None:
    """Add (or replace) a suite under its name."""
    SUITES[suite.name] = suite


def _register_builtin() -> None:
    # imported here: the suite modules import `SuiteResult` from this module
    from hat_core.evaluation.suite_cot import CotLengthSuite
    from hat_core.evaluation.suite_qa import T1Suite, T2Suite
    from hat_core.evaluation.suite_robustness import prompt_robustness, tool_robustness
    from hat_core.evaluation.suite_tool_calls import ToolCallsSuite

    for suite in (T1Suite(), T2Suite(), tool_robustness(), prompt_robustness(),
                  CotLengthSuite(), ToolCallsSuite()):
        SUITES.setdefault(suite.name, suite)


def get_suite(name: str) -> Suite:
    _register_builtin()
    if name not in SUITES:
        raise ConfigError(f"unknown suite {name!r}",
                          [Problem("suites", f"valid suites: {', '.join(SUITES)}")])
    return SUITES[name]
