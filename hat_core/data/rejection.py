"""Rejection sampling: keep a rollout only when Accuracy and Effectiveness reach their thresholds.

    kept, rejected = select(rollouts, RejectionConfig(min_accuracy=1.0, min_effectiveness=0.75))

Reasons a rollout is rejected (counted in `rejected`, a `Counter` by reason):
`teacher_error` (the teacher failed), `accuracy`, `effectiveness` (both counted when both
miss; the rollout is counted once in `rejected["total"]`), and `best_of_n` (a passing sample
that lost to a better one of the same scenario and surface). With best-of-n, the kept sample
of a group is the one with the highest accuracy + effectiveness, then the fewest retries,
then the lowest sample index. `dedupe` drops exact duplicate conversations (`duplicate`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hat_core.data.config import RejectionConfig
from hat_core.data.rollout import Rollout
from hat_core.data.trajectory import Trajectory, conversation_key

REASONS = ("teacher_error", "accuracy", "effectiveness", "best_of_n", "duplicate")


def reasons(rollout: Rollout, config: RejectionConfig) -> tuple[str, ...]:
    """Why a rollout is rejected (empty when it passes the thresholds)."""
    if rollout.scores is None:
        return ("teacher_error",)
    out = []
    if rollout.scores.accuracy < config.min_accuracy - 1e-9:
        out.append("accuracy")
    if rollout.scores.effectiveness < config.min_effectiveness - 1e-9:
        out.append("effectiveness")
    return tuple(out)


def select(rollouts: Sequence[Rollout], config: RejectionConfig
           ) -> tuple[list[Rollout], Counter]:
    """The kept rollouts (one per scenario x surface at most) and rejection counts."""
    rejected: Counter = Counter()
    groups: dict[tuple[str, str], list[Rollout]] = {}
    for r in rollouts:
        why = reasons(r, config)
        if why:
            rejected.update(why)
            rejected["total"] += 1
            continue
        groups.setdefault((r.scenario.id, r.surface.variant_id), []).append(r)
    kept = []
    for group in groups.values():
        best = max(group, key=_rank)
        kept.append(best)
        rejected["best_of_n"] += len(group) - 1
        rejected["total"] += len(group) - 1
    return kept, rejected


def _rank(r: Rollout) -> tuple:
    scores = r.scores
    total = scores.accuracy + scores.effectiveness if scores else -1.0
    retries = r.episode.retries if r.episode else 0
    return (total, -retries, -r.sample)


def dedupe(trajectories: Sequence[Trajectory]) -> tuple[list[Trajectory], int]:
    """Drop exact duplicates (same messages and tools), keeping the first; how many dropped."""
    seen: set[str] = set()
    out = []
    for t in trajectories:
        key = conversation_key(t.messages, t.harness_hash)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out, len(trajectories) - len(out)
