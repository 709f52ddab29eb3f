"""Edit-aware HSA: weight the transforms toward the kinds of change a week's edit brought.

Given the `HarnessDiff` between the live harness and the new version, each change votes for
the transform that imitates it (a renamed tool -> `rename_tools`, a renamed parameter ->
`rename_params`, reworded text -> `describe`, a reworded hook message -> `hooks`, a section
edit, prompt style or language change -> `prompt_template`, a reorder -> `reorder`, an added
tool -> `distractors`). A voted transform's weight w becomes `1 - (1 - w) / boost`: it moves
toward 1 and never past it; the other weights stay. Disabled transforms stay disabled.

    config = edit_aware_config(HsaConfig(), diff_harness(live, new), boost=3.0)
"""

from __future__ import annotations

from collections import Counter

from hat_core.diff.result import Change, HarnessDiff
from hat_core.hsa.config import HsaConfig

_BY_ELEMENT_KIND = {
    ("tool", "renamed"): "rename_tools",
    ("skill", "renamed"): "rename_skills",
    ("parameter", "renamed"): "rename_params",
    ("section", "renamed"): "prompt_template",
    ("section", "edited"): "prompt_template",
    ("section", "reordered"): "prompt_template",
    ("prompt", "restyled"): "prompt_template",
    ("prompt", "language_changed"): "prompt_template",
    ("tool", "added"): "distractors",
}


def transform_for(change: Change) -> str | None:
    """The transform that imitates one change, or None."""
    hit = _BY_ELEMENT_KIND.get((change.element, change.kind))
    if hit:
        return hit
    if change.kind == "redescribed":
        return "hooks" if change.element == "hook" and ".action." in change.path else "describe"
    if change.kind == "reordered":
        return "reorder"
    return None


def transform_votes(diff: HarnessDiff) -> Counter[str]:
    """How many changes of the diff each transform imitates."""
    return Counter(t for t in map(transform_for, diff.changes) if t is not None)


def edit_aware_config(config: HsaConfig, diff: HarnessDiff, boost: float = 3.0) -> HsaConfig:
    """`config` with the weights of the transforms the diff votes for raised."""
    if boost < 1:
        raise ValueError(f"boost must be >= 1, got {boost}")
    votes = transform_votes(diff)
    weights = {name: 1 - (1 - t.weight) / boost
               for name, t in config.transforms.items() if votes.get(name)}
    return config.with_weights(weights)
