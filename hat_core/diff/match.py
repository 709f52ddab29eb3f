"""Pairing the elements of two harness versions for `hat_core.diff.api`: by id, then by similarity.

Skills and tools are matched by `id`. Left-over elements are then paired by similarity, but
only pairs where at least one side's id was inferred (the loader gives an element without an
id its name as id, so `id == name` marks a missing id): an explicit id that is replaced by
another explicit id is a removal plus an addition, not a rename.
Tools score by parameter schema (descriptions stripped) and description + returns; skills by
their tool set and description + instructions; a pair needs `THRESHOLD`. The best-scoring
pairs are taken first. Parameters are paired by `hat_core.diff.param_match` (by name, then by
combined evidence), the matcher the simulator's binding uses too.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from hat_core.harness.model import Skill, Tool, canonical_dumps

T = TypeVar("T")
Scorer = Callable[[Any, Any], float]

THRESHOLD = 0.7
SCHEMA_WEIGHT = 0.4
TEXT_KEYS = frozenset({"description", "title"})
NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions"})


@dataclass(frozen=True)
class Pair(Generic[T]):
    """A before/after pair at positions `i`/`j`; `score` is None when matched by key."""

    before: T
    after: T
    i: int
    j: int
    score: float | None = None

    @property
    def inferred(self) -> bool:
        return self.score is not None


@dataclass(frozen=True)
class Matching(Generic[T]):
    """Pairs in after order; unmatched elements, removed in before order, added in after."""

    pairs: tuple[Pair[T], ...]
    removed: tuple[T, ...]
    added: tuple[T, ...]

    @property
    def reordered(self) -> bool:
        """Whether the paired elements appear in a different relative order."""
        return [p.i for p in self.pairs] != sorted(p.i for p in self.pairs)

    def after_keys_in_before_order(self, key: Callable[[T], str]) -> list[str]:
        return [key(p.after) for p in sorted(self.pairs, key=lambda p: p.i)]

    @classmethod
    def from_links(cls, before: Sequence[T], after: Sequence[T],
                   links: dict[int, tuple[int, float | None]], **extra: Any):
        """The matching of `links` `{after index: (before index, score or None)}`."""
        pairs = tuple(Pair(before[i], after[j], i, j, s) for j, (i, s) in sorted(links.items()))
        used = {p.i for p in pairs}
        return cls(pairs=pairs,
                   removed=tuple(b for i, b in enumerate(before) if i not in used),
                   added=tuple(a for j, a in enumerate(after) if j not in links), **extra)


def match(before: Sequence[T], after: Sequence[T], key: Callable[[T], str],
          stages: Sequence[tuple[Scorer, float]] = ()) -> Matching[T]:
    """Pair by `key`, then the left-overs stage by stage with (scorer, threshold)."""
    b_index = {key(b): i for i, b in enumerate(before)}
    links = {j: (b_index[key(a)], None) for j, a in enumerate(after) if key(a) in b_index}
    for scorer, threshold in stages:
        used = {i for i, _ in links.values()}
        left_b = [i for i in range(len(before)) if i not in used]
        left_a = [j for j in range(len(after)) if j not in links]
        def score(i: int, j: int, scorer: Scorer = scorer) -> float:
            return scorer(before[i], after[j])

        for i, j, s in pair_by_score(left_b, left_a, score, threshold):
            links[j] = (i, s)
    return Matching.from_links(before, after, links)


def pair_by_score(left: list[int], right: list[int], score: Callable[[int, int], float],
                  threshold: float) -> list[tuple[int, int, float]]:
    """Greedy one-to-one pairing, best score first (ties: nearest position, then first)."""
    candidates = []
    for i in left:
        for j in right:
            s = round(score(i, j), 6)
            if s >= threshold:
                candidates.append((-s, abs(i - j), i, j))
    taken_l, taken_r, out = set(), set(), []
    for neg, _, i, j in sorted(candidates):
        if i not in taken_l and j not in taken_r:
            taken_l.add(i)
            taken_r.add(j)
            out.append((i, j, -neg))
    return out


def match_tools(before: Sequence[Tool], after: Sequence[Tool]) -> Matching[Tool]:
    """Tools by id, then id-less left-overs by `tool_similarity`."""
    return match(before, after, _id, [(_when_inferred(tool_similarity), THRESHOLD)])


def match_skills(before: Sequence[Skill], after: Sequence[Skill],
                 tool_map: dict[str, str]) -> Matching[Skill]:
    """Skills by id, then id-less left-overs by `skill_similarity` (tool ids mapped)."""
    scorer = _when_inferred(lambda a, b: skill_similarity(a, b, tool_map))
    return match(before, after, _id, [(scorer, THRESHOLD)])


def text_similarity(a: str, b: str) -> float:
    """difflib's ratio in [0, 1]; 1.0 for two empty strings."""
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def tool_similarity(a: Tool, b: Tool) -> float:
    """Weighted similarity of the stripped parameter schemas and of description + returns."""
    schema = text_similarity(canonical_dumps(strip_text(a.parameters)),
                             canonical_dumps(strip_text(b.parameters)))
    text = text_similarity(f"{a.description} {a.returns}", f"{b.description} {b.returns}")
    return SCHEMA_WEIGHT * schema + (1 - SCHEMA_WEIGHT) * text


def skill_similarity(a: Skill, b: Skill, tool_map: dict[str, str]) -> float:
    """Weighted Jaccard of the tool sets and similarity of description + instructions."""
    tools_a, tools_b = {tool_map.get(t, t) for t in a.tools}, set(b.tools)
    union = tools_a | tools_b
    tools = len(tools_a & tools_b) / len(union) if union else 1.0
    text = text_similarity(f"{a.description} {a.instructions}",
                           f"{b.description} {b.instructions}")
    return SCHEMA_WEIGHT * tools + (1 - SCHEMA_WEIGHT) * text


def strip_text(schema: Any) -> Any:
    """A JSON Schema without its `description`/`title` wording, at every level."""
    if isinstance(schema, list):
        return [strip_text(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in TEXT_KEYS and isinstance(value, str):
            continue
        if key in NAMED_SCHEMAS and isinstance(value, dict):
            out[key] = {name: strip_text(s) for name, s in value.items()}
        else:
            out[key] = strip_text(value)
    return out


def _id(element: Skill | Tool) -> str:
    return element.id


def _when_inferred(scorer: Scorer) -> Scorer:
    """Score only pairs where at least one side's id was inferred from its name."""
    return lambda a, b: scorer(a, b) if a.id == a.name or b.id == b.name else 0.0
