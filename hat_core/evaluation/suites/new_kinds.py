"""What is new (`new`): the scenario kinds a harness adds over a previous one, judged.

    result = NewSuite().run(policy, v3, previous=v2, cases=30, seed=0)
    result.metrics["pass_rate"], result.summary["new_kinds"]   # ["bundle"]

The cases are `cases` scenarios (default 30) of the kinds `harness` supports and `previous`
did not (`hat_core.sim.scenarios.new_kinds`, e.g. `bundle` when v3 adds `bundle.offers`),
dealt in turn over those kinds, on the held-out evaluation catalog of `seed` (the one T1
plays), under the harness as given. Rows carry `case_id` (`new/original/s00000-bundle`) and
`passed` like T1's, so two models pair on them (`hat_core.release.evidence`). Without a
previous harness, or when it adds no kind, there is nothing to play: the result has no
rows, `metrics["cases"]` 0 and `summary["nothing_new"]` says why.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from hat_core.evaluation.badcases import BadCaseSink, report_bad_cases
from hat_core.evaluation.cases import Progress, cap, eval_world, original_surface, play_cases
from hat_core.evaluation.policy import as_policy
from hat_core.evaluation.suites.base import SuiteResult
from hat_core.evaluation.suites.qa import need_harness, qa_result
from hat_core.harness.model import Harness
from hat_core.inference.protocol import InferenceBackend
from hat_core.sim.judge import Judge
from hat_core.sim.policy import Policy
from hat_core.sim.runner import MAX_STEPS
from hat_core.sim.scenarios import new_kinds

DEFAULT_CASES = 30


def dealt(kinds: tuple[str, ...], cases: int) -> dict[str, int]:
    """`cases` dealt in turn over `kinds`: how many of each."""
    counts = Counter(kinds[i % len(kinds)] for i in range(cases)) if kinds else Counter()
    return {k: counts[k] for k in kinds}


@dataclass(frozen=True)
class NewSuite:
    """The kinds a harness adds over `previous`, on the held-out catalog."""

    name: str = "new"

    def run(self, model: Policy | InferenceBackend, harness: Harness | None, *,
            previous: Harness | None = None, cases: int = DEFAULT_CASES, seed: int = 0,
            max_steps: int = MAX_STEPS, max_tokens: int = 512,
            progress: Progress | None = None, bad_cases: BadCaseSink | None = None,
            limit: int | None = None, judge: Judge | None = None, **_: object) -> SuiteResult:
        """`**_`: the other simulator suites' options (`episodes`, `variants`), unused."""
        h = need_harness(self.name, harness)
        if cases < 1:
            raise ValueError(f"suite new: cases must be >= 1, got {cases}")
        kinds = new_kinds(h, previous)
        if not kinds:
            return nothing_new(previous is None)
        catalog, scenarios = eval_world(seed, 0, extra=dealt(kinds, cap(cases, limit)))
        outcomes = play_cases(self.name, [original_surface(h)], scenarios, catalog,
                              as_policy(model, max_tokens=max_tokens), max_steps=max_steps,
                              progress=progress, judge=judge)
        report_bad_cases(outcomes, bad_cases)
        return qa_result(self.name, outcomes, summary={
            "seed": seed, "world": "hat-eval", "new_kinds": list(kinds),
            "previous": previous.content_hash() if previous else None})


def nothing_new(no_previous: bool) -> SuiteResult:
    """The result when there is nothing new to play, saying why."""
    why = ("no previous harness to compare with" if no_previous
           else "the harness adds no scenario kind over the previous one")
    return SuiteResult("new", {"cases": 0.0}, {"new_kinds": [], "nothing_new": why}, ())
