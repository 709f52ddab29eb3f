"""How one harness's surface maps onto the simulator's tools: names, parameters, skills.

Tools are matched by their stable `id`. A harness tool's parameters are paired with the
reference parameters of its implementation (`ToolSpec.reference`: canonical names, JSON
Schemas with descriptions, the implementation's accepted types) by the diff's parameter
matcher, `hat_core.diff.param_match.pair_params`: same name; then the HSA rename map
`{tool_id: {variant_param: canonical_param}}` as checked hints; then combined evidence
(description, schema, required-ness, name words, position). A hint naming a missing or
already-bound parameter, a type the canonical parameter does not accept, or a pair the
evidence clearly beats is refused and listed in `ToolBinding.refused` (and
`Binding.refused_hints`); the evidence then decides. A canonical parameter left unpaired is
unbound (its default applies). A required harness parameter with no canonical counterpart gets
a filler value from its schema (`default`, first `enum`, else an empty value of its type) when
the oracle calls the tool. A tool with no implementation binds no parameters and takes no
hints (every call to it is `not_implemented`).

`bind(harness, rename_map)` is cached by the harness's content hash, the rename map and the
active render profile (`hat_core.harness.render.use_profile`), so per-harness work (binding,
rendering, compiled JSON-Schema validators) happens once.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from jsonschema import Draft202012Validator

from hat_core.diff.param_match import HintRefusal, Param, pair_params, schema_params
from hat_core.harness.model import Harness, Tool, canonical_dumps
from hat_core.harness.render import Rendered, active_profile, render
from hat_core.sim.tools import TOOLS

RenameMap = Mapping[str, Mapping[str, str]]
_CACHE_SIZE = 64
_EMPTY = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}


@dataclass(frozen=True)
class ToolBinding:
    """One harness tool: its id, surface name, and canonical <-> surface parameter names."""

    tool_id: str
    name: str
    to_surface: Mapping[str, str]  # canonical -> surface
    to_canonical: Mapping[str, str]  # surface -> canonical
    fillers: Mapping[str, Any]  # required surface params no canonical param binds
    implemented: bool
    validator: Any  # a compiled jsonschema validator
    refused: tuple[HintRefusal, ...] = ()  # rename-map hints not taken, with the reason

    def canonical_args(self, args: dict) -> dict:
        """Surface arguments -> canonical ones (unbound surface arguments are dropped)."""
        return {self.to_canonical[k]: v for k, v in args.items() if k in self.to_canonical}

    def surface_args(self, args: dict) -> dict:
        """Canonical arguments -> surface ones, plus fillers for unbound required params."""
        out = {self.to_surface[k]: v for k, v in args.items() if k in self.to_surface}
        return {**self.fillers, **out}


@dataclass(frozen=True)
class Binding:
    """Everything per harness the simulator needs, computed once."""

    harness: Harness
    harness_hash: str
    rename_map: Mapping[str, Mapping[str, str]]
    rendered: Rendered
    tools_by_name: Mapping[str, ToolBinding]
    tools_by_id: Mapping[str, ToolBinding]
    skill_ids_by_name: Mapping[str, str]
    skill_names_by_id: Mapping[str, str]
    skill_of_tool: Mapping[str, str]  # tool id -> the smallest skill id that lists it

    @property
    def refused_hints(self) -> dict[str, tuple[HintRefusal, ...]]:
        """Per tool id, the rename-map hints that were refused (empty when all were taken)."""
        return {t.tool_id: t.refused for t in self.tools_by_id.values() if t.refused}


_IDENTITY: OrderedDict[int, tuple[Harness, str]] = OrderedDict()
_BINDINGS: OrderedDict[tuple[str, str, str], Binding] = OrderedDict()
_MAP_KEYS: OrderedDict[int, tuple[object, str]] = OrderedDict()


def harness_hash(harness: Harness) -> str:
    """The harness's content hash, memoised per object (hashing serialises the harness)."""
    hit = _IDENTITY.get(id(harness))
    if hit is not None and hit[0] is harness:
        return hit[1]
    value = harness.content_hash()
    _remember(_IDENTITY, id(harness), (harness, value))
    return value


def bind(harness: Harness, rename_map: RenameMap | None = None) -> Binding:
    """The (cached) binding of `harness` under an optional HSA rename map."""
    key = (harness_hash(harness), _map_key(rename_map), active_profile())
    hit = _BINDINGS.get(key)
    if hit is None:
        hit = _build(harness, key[0], rename_map or {}, key[2])
        _remember(_BINDINGS, key, hit)
    return hit


def _map_key(rename_map: RenameMap | None) -> str:
    """The rename map's canonical form, memoised per object like `harness_hash`
    (a map passed to `bind` is treated as immutable from then on)."""
    if not rename_map:
        return "{}"
    hit = _MAP_KEYS.get(id(rename_map))
    if hit is not None and hit[0] is rename_map:
        return hit[1]
    value = canonical_dumps(rename_map)
    _remember(_MAP_KEYS, id(rename_map), (rename_map, value))
    return value


def _remember(cache: OrderedDict, key, value) -> None:
    cache[key] = value
    while len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def _build(harness: Harness, digest: str, rename_map: RenameMap, profile: str) -> Binding:
    tools = [bind_tool(t, rename_map.get(t.id, {})) for t in harness.tools]
    skill_of_tool: dict[str, str] = {}
    # by skill id, not list order: reordering skills is a surface change and must not
    # change which skill a tool call is attributed to
    for skill in sorted(harness.skills, key=lambda s: s.id):
        for tool_id in skill.tools:
            skill_of_tool.setdefault(tool_id, skill.id)
    return Binding(
        harness=harness, harness_hash=digest,
        rename_map=json.loads(canonical_dumps(rename_map)), rendered=render(harness, profile),
        tools_by_name={t.name: t for t in tools}, tools_by_id={t.tool_id: t for t in tools},
        skill_ids_by_name={s.name: s.id for s in harness.skills},
        skill_names_by_id={s.id: s.name for s in harness.skills},
        skill_of_tool=skill_of_tool,
    )


def bind_tool(tool: Tool, renames: Mapping[str, str]) -> ToolBinding:
    """Bind one harness tool's parameters onto its implementation's canonical ones."""
    spec = TOOLS.get(tool.id)
    hints = tuple(renames.items()) if spec else None  # in order: refusals are reported so
    # declaration order is evidence (position), so the key keeps it: no sorted keys
    pairs, refused = _pairing(tool.id, json.dumps(tool.parameters, ensure_ascii=False), hints)
    surface = dict(pairs)
    props: dict = tool.parameters.get("properties", {})
    required = tool.parameters.get("required", [])
    fillers = {name: _filler(props.get(name, {})) for name in required
               if name not in surface.values()}
    return ToolBinding(
        tool_id=tool.id, name=tool.name,
        to_surface=surface, to_canonical={v: k for k, v in surface.items()},
        fillers=fillers, implemented=spec is not None,
        validator=Draft202012Validator(tool.parameters), refused=refused,
    )


@lru_cache(maxsize=8192)
def _pairing(tool_id: str, parameters: str, hints: tuple[tuple[str, str], ...] | None
             ) -> tuple[dict[str, str], tuple]:
    """canonical -> surface parameter names and the refused hints of one tool, memoised by
    the tool's parameter schema and hints: HSA variants repeat most tools unchanged (the
    name is no evidence to the matcher), and matching is most of the cost of a bind."""
    m = pair_params(reference_params(tool_id), schema_params(json.loads(parameters)),
                    dict(hints) if hints is not None else None)
    return {p.before.name: p.after.name for p in m.pairs}, tuple(m.refused)


@cache
def reference_params(tool_id: str) -> tuple[Param, ...]:
    """The canonical parameters of a tool as the matcher sees them (none if unimplemented)."""
    spec = TOOLS.get(tool_id)
    if spec is None:
        return ()
    return tuple(schema_params(spec.reference, {p.name: p.types for p in spec.params}))


def _filler(schema: dict) -> Any:
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    return _EMPTY.get(schema.get("type"), "")


def canonical_params(harness: Harness) -> dict[str, dict[str, str]]:
    """`{tool_id: {harness_param: canonical_param}}` of the original harness."""
    return {tid: dict(tb.to_canonical) for tid, tb in bind(harness).tools_by_id.items()}
