"""The harness-edit check: bad-case rate on the new harness before and after retraining.

    check = edit_check(old, new, before=champion, after=retrained, episodes=60, seed=0)
    check.before_rate, check.after_rate, check.relative_reduction

For an edit old -> new, `before` is the model trained for the old harness (the champion when
the edit lands) and `after` the model retrained for the new one; both play the same held-out
scenarios (`cases.eval_world`) under the *new* harness, judged by the rule judge. The
bad-case rate is failed / played; the relative reduction is (before - after) / before
(None when `before` has no bad case). Several edits pool their counts
(`edit_check_many`): the paper's "Fixed-SFT reduces bad cases by 18.1%, HAT by 51.7%" is this
number over a set of held-out edits. The edit's semantic diff is summarised alongside.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hat_core.diff.api import diff_harness
from hat_core.evaluation.badcases import BadCaseSink, report_bad_cases
from hat_core.evaluation.cases import (
    CaseOutcome,
    Progress,
    eval_world,
    failure_counts,
    original_surface,
    play_cases,
)
from hat_core.evaluation.policy import as_policy
from hat_core.harness.model import Harness
from hat_core.inference.protocol import InferenceBackend
from hat_core.sim.policy import Policy
from hat_core.sim.runner import MAX_STEPS


def relative_reduction(before_rate: float, after_rate: float) -> float | None:
    """(before - after) / before; None when there was nothing to reduce."""
    if before_rate <= 0:
        return None
    return (before_rate - after_rate) / before_rate


@dataclass(frozen=True)
class BadCaseRate:
    """Bad cases among played cases, with the count of each failure type."""

    bad: int
    cases: int
    failures: dict[str, int] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.bad / self.cases if self.cases else 0.0

    def to_dict(self) -> dict:
        return {"bad": self.bad, "cases": self.cases, "rate": self.rate,
                "failures": dict(self.failures)}

    def __add__(self, other: BadCaseRate) -> BadCaseRate:
        merged = dict(self.failures)
        for k, v in other.failures.items():
            merged[k] = merged.get(k, 0) + v
        return BadCaseRate(self.bad + other.bad, self.cases + other.cases, merged)


def rate_of(outcomes: Sequence[CaseOutcome]) -> BadCaseRate:
    return BadCaseRate(sum(not o.verdict.passed for o in outcomes), len(outcomes),
                       failure_counts(outcomes))


@dataclass(frozen=True)
class EditCheck:
    """Before/after bad-case rates of one edit (or several pooled) and the reduction."""

    before: BadCaseRate
    after: BadCaseRate
    edits: tuple[dict, ...] = ()

    @property
    def before_rate(self) -> float:
        return self.before.rate

    @property
    def after_rate(self) -> float:
        return self.after.rate

    @property
    def relative_reduction(self) -> float | None:
        return relative_reduction(self.before_rate, self.after_rate)

    def metrics(self) -> dict[str, float]:
        out = {"before_rate": self.before_rate, "after_rate": self.after_rate}
        red = self.relative_reduction
        return out | ({"relative_reduction": red} if red is not None else {})

    def to_dict(self) -> dict:
        return {"before": self.before.to_dict(), "after": self.after.to_dict(),
                "relative_reduction": self.relative_reduction, "edits": list(self.edits)}


def edit_check(old: Harness, new: Harness, *, before: Policy | InferenceBackend,
               after: Policy | InferenceBackend, episodes: int = 30, seed: int = 0,
               max_steps: int = MAX_STEPS, max_tokens: int = 512, name: str = "edit",
               progress: Progress | None = None,
               bad_cases: BadCaseSink | None = None) -> EditCheck:
    """Both models on the new harness over the same held-out scenarios (see module doc).
    Bad cases of both go to `bad_cases`, under suites `edit_before` and `edit_after`."""
    catalog, scenarios = eval_world(seed, episodes)
    surface = original_surface(new)
    played = {}
    for label, model, done in (("before", before, 0), ("after", after, len(scenarios))):
        played[label] = play_cases(f"edit_{label}", [surface], scenarios, catalog,
                                   as_policy(model, max_tokens=max_tokens), group=name,
                                   max_steps=max_steps, progress=progress, done=done,
                                   total=2 * len(scenarios))
        report_bad_cases(played[label], bad_cases)
    diff = diff_harness(old, new).to_dict()
    summary = {"name": name, "old_hash": old.content_hash(), "new_hash": new.content_hash(),
               "diff_counts": diff["counts"], "surface_only": diff["surface_only"]}
    return EditCheck(rate_of(played["before"]), rate_of(played["after"]), (summary,))


def edit_check_many(edits: Sequence[tuple[str, Harness, Harness]], *,
                    before: Policy | InferenceBackend, after: Policy | InferenceBackend,
                    episodes: int = 30, seed: int = 0, **options) -> EditCheck:
    """Several named edits `(name, old, new)`, counts pooled before the reduction."""
    checks = [edit_check(old, new, before=before, after=after, episodes=episodes, seed=seed,
                         name=name, **options) for name, old, new in edits]
    if not checks:
        raise ValueError("edit_check_many needs at least one edit")
    pooled_before, pooled_after = checks[0].before, checks[0].after
    for c in checks[1:]:
        pooled_before, pooled_after = pooled_before + c.before, pooled_after + c.after
    edits_out = tuple(e | {"before_rate": c.before_rate, "after_rate": c.after_rate,
                           "relative_reduction": c.relative_reduction}
                      for c in checks for e in c.edits)
    return EditCheck(pooled_before, pooled_after, edits_out)
