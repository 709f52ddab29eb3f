"""Pairing the parameters of two tools: the one matcher of the diff and the simulator's binding.

    from hat_core.diff.param_match import pair_params, schema_params, tool_params
    m = pair_params(tool_params(before), tool_params(after))            # the diff
    m = pair_params(reference, tool_params(tool), hints={"pid": "product_id"})  # the binding
    m.pairs, m.removed, m.added, m.refused

`before` is the older (or reference) side, `after` the newer (or harness) side. Pairing runs in
three steps:

1. Same name: a pair, whatever else changed.
2. Hints `{after_name: before_name}` (the simulator's HSA rename map): taken unless `refuse`
   finds a reason: a name that is not a parameter, a parameter already paired, a type the
   before side does not accept, or evidence that scores another pair for either side at least
   `HINT_MARGIN` above the hinted one (a wrong hint). A refused hint is reported in `refused`
   and its parameters go on to step 3.
3. Evidence: the left-overs are paired greedily, best combined score first (ties: nearest
   position). A pair must be plausible: similar descriptions (`PARAM_THRESHOLD`), or identical
   schema (wording stripped) and required-ness, or compatible types and a shared name word.
   The score weighs (`WEIGHTS`) description similarity (template-robust: mean of difflib's
   ratio and the matched share of the shorter text), schema similarity (JSON type, then the
   stripped keywords: enum, minimum, items ...), required-ness, name words and position.

So two renamed parameters of one type are told apart by their descriptions, constraints,
required-ness and names, in the diff and in the binding alike. Pure and deterministic.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from hat_core.diff.match import Matching, pair_by_score, strip_text
from hat_core.harness.model import Tool, canonical_dumps

PARAM_THRESHOLD = 0.6
HINT_MARGIN = 0.25
WEIGHTS = {"description": 0.5, "schema": 0.2, "required": 0.15, "name": 0.1, "position": 0.05}
SAME_TYPE, ACCEPTED_TYPE = 0.5, 0.4
_TYPE_GROUPS = {"integer": "number"}
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


@dataclass(frozen=True)
class Param:
    """One tool parameter: name, JSON Schema, whether it is required, and the JSON types a
    counterpart may have besides the schema's own (`accepts`: the simulator's alt types)."""

    name: str
    schema: dict
    required: bool
    accepts: frozenset[str] = frozenset()

    @property
    def description(self) -> str:
        text = self.schema.get("description", "")
        return text if isinstance(text, str) else ""

    @property
    def types(self) -> frozenset[str]:
        """The schema's JSON types (grouped: integer counts as number); empty when unset."""
        declared = self.schema.get("type")
        names = declared if isinstance(declared, list) else [declared] if declared else []
        return frozenset(_TYPE_GROUPS.get(t, t) for t in names)

    @property
    def accepted_types(self) -> frozenset[str]:
        return self.types | {_TYPE_GROUPS.get(t, t) for t in self.accepts}


@dataclass(frozen=True)
class HintRefusal:
    """A hint `after -> before` that was not taken, and why."""

    after: str
    before: str
    reason: str

    @property
    def message(self) -> str:
        return f"hint {self.after} -> {self.before} refused: {self.reason}"


@dataclass(frozen=True)
class ParamMatching(Matching[Param]):
    """A parameter `Matching` plus the hints that were refused."""

    refused: tuple[HintRefusal, ...] = ()


@dataclass(frozen=True)
class Evidence:
    """What speaks for pairing two parameters; `description` is None when one has none."""

    description: float | None
    schema: float
    same_required: bool
    name: float
    position: float

    @property
    def score(self) -> float:
        w = WEIGHTS
        return (w["description"] * (self.description or 0.0) + w["schema"] * self.schema
                + w["required"] * self.same_required + w["name"] * self.name
                + w["position"] * self.position)

    @property
    def plausible(self) -> bool:
        """Similar descriptions, identical schema and required-ness, or compatible types
        and a shared name word."""
        if self.description is not None and self.description >= PARAM_THRESHOLD:
            return True
        if self.schema == 1.0 and self.same_required:
            return True
        return self.schema >= ACCEPTED_TYPE and self.name > 0


def pair_params(before: Sequence[Param], after: Sequence[Param],
                hints: Mapping[str, str] | None = None) -> ParamMatching:
    """Pair by name, then checked hints `{after_name: before_name}`, then by evidence."""
    b_index = {p.name: i for i, p in enumerate(before)}
    links = {j: (b_index[a.name], None) for j, a in enumerate(after) if a.name in b_index}

    seen: dict[tuple[int, int], Evidence] = {}

    def ev(i: int, j: int) -> Evidence:
        if (i, j) not in seen:
            seen[i, j] = evidence(before[i], after[j], _position(i, len(before), j, len(after)))
        return seen[i, j]

    refused = _take_hints(before, after, hints or {}, links, ev)
    used = {i for i, _ in links.values()}
    left_b = [i for i in range(len(before)) if i not in used]
    left_a = [j for j in range(len(after)) if j not in links]
    for i, j, s in pair_by_score(left_b, left_a, lambda i, j: _plausible_score(ev(i, j)), 1e-6):
        links[j] = (i, s)
    return ParamMatching.from_links(before, after, links, refused=tuple(refused))


def _plausible_score(e: Evidence) -> float:
    return e.score if e.plausible else 0.0


def _take_hints(before: Sequence[Param], after: Sequence[Param], hints: Mapping[str, str],
                links: dict, ev) -> list[HintRefusal]:
    """Add the hints `refuse` finds no reason against to `links`; the refusals."""
    b_index = {p.name: i for i, p in enumerate(before)}
    a_index = {p.name: j for j, p in enumerate(after)}
    free_b = set(range(len(before))) - {i for i, _ in links.values()}
    free_a = set(range(len(after))) - set(links)
    refused = []
    for a_name, b_name in hints.items():
        i, j = b_index.get(b_name), a_index.get(a_name)
        reason = refuse(before, after, i, j, free_b, free_a, ev, a_name, b_name)
        if reason:
            refused.append(HintRefusal(a_name, b_name, reason))
            continue
        links[j] = (i, round(ev(i, j).score, 6))
        free_b.discard(i)
        free_a.discard(j)
    return refused


def refuse(before: Sequence[Param], after: Sequence[Param], i: int | None, j: int | None,
           free_b: set[int], free_a: set[int], ev, a_name: str, b_name: str) -> str | None:
    """Why the hint `after[j] -> before[i]` must not be taken, or None."""
    if j is None:
        return f"no parameter {a_name!r}"
    if i is None:
        return f"no parameter {b_name!r} on the other side"
    if j not in free_a or i not in free_b:
        taken = a_name if j not in free_a else b_name
        return f"{taken!r} is already paired"
    if not _types_fit(before[i], after[j]):
        return (f"type {_show(after[j].types)} of {a_name!r} is not one {b_name!r} accepts "
                f"({_show(before[i].accepted_types)})")
    hinted = ev(i, j).score
    rivals = [(ev(k, j).score, before[k].name) for k in free_b if k != i]
    rivals += [(ev(i, k).score, after[k].name) for k in free_a if k != j]
    rivals = [r for r in rivals if r[0] - hinted >= HINT_MARGIN]
    if rivals:
        score, other = max(rivals)
        return (f"the evidence pairs it with {other!r} ({score:.2f}) over the hint "
                f"({hinted:.2f})")
    return None


def _types_fit(b: Param, a: Param) -> bool:
    """Whether `a`'s type is one `b` accepts (an unset type fits anything)."""
    return not a.types or not b.types or bool(a.types & b.accepted_types)


def _show(types: Iterable[str]) -> str:
    return "/".join(sorted(types)) or "any"


def evidence(b: Param, a: Param, position: float = 1.0) -> Evidence:
    """The evidence for pairing `b` (before) with `a` (after)."""
    return Evidence(description=description_similarity(b.description, a.description),
                    schema=schema_similarity(b, a), same_required=b.required == a.required,
                    name=name_similarity(b.name, a.name), position=position)


def description_similarity(a: str, b: str) -> float | None:
    """Mean of difflib's ratio and the matched share of the shorter text; None if one is
    empty. A template around the text ("参数：{text}") keeps the second part at 1."""
    if not a or not b:
        return None
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    return (matcher.ratio() + matched / min(len(a), len(b))) / 2


def schema_similarity(b: Param, a: Param) -> float:
    """1 for identical stripped schemas; same JSON type: `SAME_TYPE` plus the rest by the
    share of stripped keywords in common; a type `b` accepts: `ACCEPTED_TYPE`; else 0."""
    sb, sa = strip_text(b.schema), strip_text(a.schema)
    if sb == sa:
        return 1.0
    if not b.types or not a.types or b.types & a.types:
        return SAME_TYPE + (1 - SAME_TYPE) * _keyword_overlap(sb, sa)
    return ACCEPTED_TYPE if a.types & b.accepted_types else 0.0


def _keyword_overlap(a: dict, b: dict) -> float:
    items_a = {(k, canonical_dumps(v)) for k, v in a.items()}
    items_b = {(k, canonical_dumps(v)) for k, v in b.items()}
    union = items_a | items_b
    return len(items_a & items_b) / len(union) if union else 1.0


def name_similarity(a: str, b: str) -> float:
    """Jaccard of the lower-case name words (`coupon_ids` and `couponCode` share `coupon`)."""
    wa, wb = set(name_words(a)), set(name_words(b))
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


def name_words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name)]


def _position(i: int, n: int, j: int, m: int) -> float:
    """1 - the distance of the two relative positions."""
    return 1.0 - abs(i / max(n - 1, 1) - j / max(m - 1, 1))


def match_params(before: Tool, after: Tool) -> ParamMatching:
    """The diff's parameter matching of two versions of one tool (no hints)."""
    return pair_params(tool_params(before), tool_params(after))


def tool_params(tool: Tool) -> list[Param]:
    """The tool's parameters in declaration order."""
    return schema_params(tool.parameters)


def schema_params(parameters: Mapping, accepts: Mapping[str, Iterable[str]] | None = None
                  ) -> list[Param]:
    """The parameters of an object JSON Schema, with optional extra accepted types by name."""
    required = set(parameters.get("required", []))
    props = parameters.get("properties", {})
    return [Param(name, schema, name in required, frozenset((accepts or {}).get(name, ())))
            for name, schema in props.items()]
