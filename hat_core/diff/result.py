"""The typed result of a harness diff: `Change` and `HarnessDiff`.

Both are frozen dataclasses whose `before`/`after` values are plain JSON values (str, int,
float, bool, None, list, dict), so `HarnessDiff.from_dict(json.loads(json.dumps(d.to_dict())))`
gives back an equal diff. `hat_core.diff.api` builds them; see its docstring for the rules.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

SURFACE = "surface"
SEMANTIC = "semantic"
CLASSIFICATIONS = (SURFACE, SEMANTIC)
ELEMENTS = ("harness", "skill", "tool", "parameter", "section", "variable", "prompt", "hook")
KINDS = (
    "added", "removed", "renamed", "redescribed", "reordered", "line_changed",
    "tools_changed", "type_changed", "required_changed", "enum_changed", "constraint_changed",
    "edited", "value_changed", "restyled", "language_changed",
    "event_changed", "condition_changed", "action_changed", "rule_changed",
)


@dataclass(frozen=True)
class Change:
    """One difference between two harness versions.

    `element_id` is the element's id on the after side (the before side for `removed`);
    `path` locates the changed field, e.g. `tools[price.calc].parameters.properties.quantity`.
    `text_diff` holds a unified diff for edited prompt sections, else "".
    """

    kind: str
    element: str
    element_id: str
    path: str
    classification: str
    summary: str
    before: Any = None
    after: Any = None
    text_diff: str = ""

    def __post_init__(self) -> None:
        _check_choice("kind", self.kind, KINDS)
        _check_choice("element", self.element, ELEMENTS)
        _check_choice("classification", self.classification, CLASSIFICATIONS)
        object.__setattr__(self, "before", plain(self.before))
        object.__setattr__(self, "after", plain(self.after))

    def to_dict(self) -> dict:
        """The change as a JSON-ready mapping (field name -> value)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Change:
        """Rebuild a change from `to_dict()` output (ValueError on unknown values)."""
        return cls(**data)


@dataclass(frozen=True)
class HarnessDiff:
    """Every change between two harness versions, in a stable order."""

    changes: tuple[Change, ...] = field(default_factory=tuple)

    @property
    def surface(self) -> tuple[Change, ...]:
        """The surface-only changes (what HSA also varies)."""
        return tuple(c for c in self.changes if c.classification == SURFACE)

    @property
    def semantic(self) -> tuple[Change, ...]:
        """The changes of capability, schema or rule."""
        return tuple(c for c in self.changes if c.classification == SEMANTIC)

    @property
    def is_empty(self) -> bool:
        return not self.changes

    @property
    def is_surface_only(self) -> bool:
        """True when no change is semantic (also for an empty diff)."""
        return not self.semantic

    def to_dict(self) -> dict:
        """`{surface_only, counts: {surface, semantic}, changes: [...]}` for JSON."""
        return {
            "surface_only": self.is_surface_only,
            "counts": {SURFACE: len(self.surface), SEMANTIC: len(self.semantic)},
            "changes": [c.to_dict() for c in self.changes],
        }

    @classmethod
    def from_dict(cls, data: dict) -> HarnessDiff:
        """Rebuild a diff from `to_dict()` output; the counts are derived, not read."""
        return cls(tuple(Change.from_dict(c) for c in data["changes"]))


def plain(value: Any) -> Any:
    """`value` as plain JSON data (tuples become lists); ValueError if not JSON-able."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False))
    except TypeError as exc:
        raise ValueError(f"not JSON data: {value!r}") from exc


def _check_choice(name: str, value: str, valid: tuple[str, ...]) -> None:
    if value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(valid)}")


def surface_change(kind: str, element: str, element_id: str, path: str, summary: str,
                   before: Any = None, after: Any = None, text_diff: str = "") -> Change:
    """A `Change` classified as surface."""
    return Change(kind, element, element_id, path, SURFACE, summary, before, after, text_diff)


def semantic_change(kind: str, element: str, element_id: str, path: str, summary: str,
                    before: Any = None, after: Any = None, text_diff: str = "") -> Change:
    """A `Change` classified as semantic."""
    return Change(kind, element, element_id, path, SEMANTIC, summary, before, after, text_diff)


def show(value: Any) -> str:
    """A short one-line rendering of a value for change summaries."""
    if value is None:
        return "unset"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def list_delta(before: list | tuple, after: list | tuple) -> str:
    """`+x, -y` for the values added to and removed from a list (order ignored)."""
    b, a = [show(v) for v in before], [show(v) for v in after]
    return ", ".join([f"+{v}" for v in a if v not in b] + [f"-{v}" for v in b if v not in a])
