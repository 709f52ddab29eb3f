"""What HSA must not change, as one hash; and mapping a variant back onto the original.

`semantic_fingerprint(h)` hashes what a harness *means*: ids; each tool's parameter schemas
without description/title wording, keyed by parameter name, with required and enums; each
skill's set of tool ids; section ids with their placeholders, the body of rules sections and
the prompt variables; hook ids, events, conditions and action types, in order. Names,
wording, order (except hooks) and style are left out.

`map_back(variant)` drops the distractor tools and applies the inverse rename map, so
`semantic_fingerprint(map_back(v)) == semantic_fingerprint(original)` for every variant.
"""

from __future__ import annotations

import hashlib

from hat_core.diff.match import strip_text
from hat_core.diff.prompt import RULE_SECTION_IDS
from hat_core.harness.model import PLACEHOLDER, Harness, canonical_dumps
from hat_core.hsa.rename import apply_renames
from hat_core.hsa.variant import Variant


def semantic_fingerprint(harness: Harness) -> str:
    """sha256 over the harness's semantics (see the module docstring)."""
    return hashlib.sha256(canonical_dumps(semantic_view(harness)).encode()).hexdigest()


def semantic_view(harness: Harness) -> dict:
    """The data `semantic_fingerprint` hashes, for readable test failures."""
    return {
        "harness": harness.harness,
        "skills": {s.id: sorted(s.tools) for s in harness.skills},
        "tools": {t.id: _schema_view(t.parameters) for t in harness.tools},
        "sections": {s.id: sorted(set(PLACEHOLDER.findall(s.body)))
                     for s in harness.prompt.sections},
        "rules": {s.id: s.body for s in harness.prompt.sections if s.id in RULE_SECTION_IDS},
        "variables": dict(harness.prompt.variables),
        "hooks": [[h.id, h.event, h.condition.model_dump(mode="json"), h.action.type]
                  for h in harness.hooks],
    }


def _schema_view(parameters: dict) -> dict:
    stripped = strip_text(parameters)
    out = dict(stripped)
    out["required"] = sorted(stripped.get("required", []))
    return out


def map_back(variant: Variant) -> Harness:
    """The variant without its distractors and with every rename undone."""
    harness = variant.harness
    if variant.distractors:
        kept = tuple(t for t in harness.tools if t.id not in set(variant.distractors))
        harness = harness.model_copy(update={"tools": kept})
    return apply_renames(harness, variant.rename_map.inverse())
