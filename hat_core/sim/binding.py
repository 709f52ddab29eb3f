"""How one harness's surface maps onto the simulator's tools: names, parameters, skills.

Tools are matched by their stable `id`. For each canonical parameter of a tool the harness
parameter is found by, in order: the same name; the HSA rename map
`{tool_id: {variant_param: canonical_param}}`; the unique not-yet-bound harness parameter of
an accepted JSON type; among several such, the unique one sharing a name word (`coupon_code`
for `coupon_ids`). Otherwise the canonical parameter is unbound (its default applies). A
required harness parameter with no canonical counterpart gets a filler value from its schema
(`default`, first `enum`, else an empty value of its type) when the oracle calls the tool.

`bind(harness, rename_map)` is cached by the harness's content hash, the rename map and the
active render profile (`hat_core.harness.render.use_profile`), so per-harness work (binding,
rendering, compiled JSON-Schema validators) happens once.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from hat_core.harness.model import Harness, Tool, canonical_dumps
from hat_core.harness.render import Rendered, active_profile, render
from hat_core.sim.tools import TOOLS, Param

RenameMap = Mapping[str, Mapping[str, str]]
_CACHE_SIZE = 64
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_TYPE_GROUPS = {"integer": "number"}
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
    props: dict = tool.parameters.get("properties", {})
    surface = _match_params(spec.params if spec else (), props, renames)
    required = tool.parameters.get("required", [])
    fillers = {name: _filler(props.get(name, {})) for name in required if name not in surface}
    return ToolBinding(
        tool_id=tool.id, name=tool.name,
        to_surface=surface, to_canonical={v: k for k, v in surface.items()},
        fillers=fillers, implemented=spec is not None,
        validator=Draft202012Validator(tool.parameters),
    )


def _match_params(params: tuple[Param, ...], props: dict,
                  renames: Mapping[str, str]) -> dict[str, str]:
    bound: dict[str, str] = {}
    for p in params:
        if p.name in props:
            bound[p.name] = p.name
    for variant, canonical in renames.items():
        if variant in props and canonical not in bound and variant not in bound.values():
            bound[canonical] = variant
    for p in params:
        if p.name not in bound:
            free = [n for n in props if n not in bound.values()]
            match = _by_type(p, free, props)
            if match:
                bound[p.name] = match
    return bound


def _by_type(param: Param, free: list[str], props: dict) -> str | None:
    exact = [n for n in free if _group(props[n].get("type")) == _group(param.type)]
    if len(exact) == 1:
        return exact[0]
    loose = [n for n in free if _group(props[n].get("type")) in {_group(t) for t in param.types}]
    if len(loose) == 1:
        return loose[0]
    words = set(_words(param.name))
    shared = [n for n in loose if words & set(_words(n))]
    return shared[0] if len(shared) == 1 else None


def _group(json_type: Any) -> Any:
    return _TYPE_GROUPS.get(json_type, json_type)


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name.replace("-", "_"))]


def _filler(schema: dict) -> Any:
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    return _EMPTY.get(schema.get("type"), "")
