"""Named evaluation suites: the `SUITES` registry and `get_suite`.

Register more with `register(suite)`; `get_suite(name)` lists the valid names when a name is
unknown. `evaluate.evaluate(...)` runs several at once (T1 cases shared with `t2` and
`cot_length`).

    result = get_suite("ifeval").run(backend, None, nltk_data=Path("nltk_data"), limit=20)
    result = get_suite("t2").run(OraclePolicy(), harness, episodes=30, variants=4)
    result = get_suite("new").run(OraclePolicy(), v3, previous=v2, cases=30)
"""

from __future__ import annotations

from hat_core.errors import ConfigError, Problem
from hat_core.evaluation.suites.base import Suite, SuiteResult
from hat_core.evaluation.suites.cot import CotLengthSuite
from hat_core.evaluation.suites.ifeval import DEFAULT_IFEVAL_SET, IfevalSuite
from hat_core.evaluation.suites.new_kinds import NewSuite
from hat_core.evaluation.suites.qa import T1Suite, T2Suite
from hat_core.evaluation.suites.robustness import prompt_robustness, tool_robustness
from hat_core.evaluation.suites.tool_calls import ToolCallsSuite

__all__ = ["DEFAULT_IFEVAL_SET", "SUITES", "Suite", "SuiteResult", "get_suite", "register"]

SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (IfevalSuite(), T1Suite(), T2Suite(), tool_robustness(), prompt_robustness(),
                  CotLengthSuite(), ToolCallsSuite(), NewSuite())
}


def register(suite: Suite) -> None:
    """Add (or replace) a suite under its name."""
    SUITES[suite.name] = suite


def get_suite(name: str) -> Suite:
    if name not in SUITES:
        raise ConfigError(f"unknown suite {name!r}",
                          [Problem("suites", f"valid suites: {', '.join(SUITES)}")])
    return SUITES[name]
