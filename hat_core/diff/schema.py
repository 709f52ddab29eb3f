"""The parameter part of a harness diff: how one tool's JSON-Schema parameters changed.

Parameters are paired by `hat_core.diff.param_match.match_params`. A rename, a reworded
`description`/`title` and a new parameter order are surface; an added or removed parameter,
a changed type, required-ness or enum, and any other changed keyword (minimum, maximum,
items, pattern, format, default, additionalProperties ...) are semantic.
"""

from __future__ import annotations

from hat_core.diff.match import TEXT_KEYS, strip_text
from hat_core.diff.param_match import Param, match_params
from hat_core.diff.result import (
    Change,
    list_delta,
    semantic_change,
    show,
    surface_change,
)
from hat_core.harness.model import Tool


def diff_parameters(tool_id: str, before: Tool, after: Tool) -> list[Change]:
    """Every parameter change between two versions of the tool `tool_id`."""
    m = match_params(before, after)
    base = f"tools[{tool_id}].parameters"
    changes = [_removed(tool_id, base, p) for p in m.removed]
    changes += [_added(tool_id, base, p) for p in m.added]
    for pair in m.pairs:
        changes += param_changes(tool_id, base, pair.before, pair.after)
    if m.reordered:
        changes.append(surface_change(
            "reordered", "tool", tool_id, f"{base}.properties",
            f"tool {tool_id} parameters reordered",
            m.after_keys_in_before_order(lambda p: p.name), [p.after.name for p in m.pairs]))
    changes += key_changes("tool", tool_id, base, f"tool {tool_id} parameters",
                           before.parameters, after.parameters, skip={"properties", "required"})
    return changes


def param_changes(tool_id: str, base: str, b: Param, a: Param) -> list[Change]:
    """The changes of one paired parameter: rename, type, required, enum, other keywords."""
    eid, path = f"{tool_id}.{a.name}", f"{base}.properties.{a.name}"
    who = f"tool {tool_id} parameter {a.name}"
    out = []
    if b.name != a.name:
        out.append(surface_change("renamed", "parameter", eid, path,
                                  f"tool {tool_id} parameter {b.name} renamed: "
                                  f"{b.name} -> {a.name}", b.name, a.name))
    if b.schema.get("type") != a.schema.get("type"):
        out.append(semantic_change("type_changed", "parameter", eid, f"{path}.type",
                                   f"{who} type changed: {show(b.schema.get('type'))} -> "
                                   f"{show(a.schema.get('type'))}",
                                   b.schema.get("type"), a.schema.get("type")))
    if b.required != a.required:
        out.append(semantic_change("required_changed", "parameter", eid, f"{base}.required",
                                   f"{who} required changed: {_req(b)} -> {_req(a)}",
                                   b.required, a.required))
    out += _enum_changes(eid, path, who, b.schema.get("enum"), a.schema.get("enum"))
    return out + key_changes("parameter", eid, path, who, b.schema, a.schema,
                             skip={"type", "enum"})


def key_changes(element: str, eid: str, path: str, who: str, before: dict, after: dict,
                skip: set[str]) -> list[Change]:
    """Per JSON-Schema keyword: wording changes are surface, everything else semantic."""
    keys = [k for k in dict.fromkeys([*before, *after]) if k not in skip]
    out = []
    for key in keys:
        b, a = before.get(key), after.get(key)
        if b == a:
            continue
        if key in TEXT_KEYS or strip_text(b) == strip_text(a):
            what = key if key in TEXT_KEYS else f"{key} wording"
            out.append(surface_change("redescribed", element, eid, f"{path}.{key}",
                                      f"{who} {what} reworded", b, a))
        else:
            out.append(semantic_change("constraint_changed", element, eid, f"{path}.{key}",
                                       f"{who} {key} changed: {show(b)} -> {show(a)}", b, a))
    return out


def _enum_changes(eid: str, path: str, who: str, b: list | None, a: list | None) -> list[Change]:
    if b == a:
        return []
    delta = list_delta(b or [], a or []) if b and a else f"{show(b)} -> {show(a)}"
    if not delta:
        return [surface_change("reordered", "parameter", eid, f"{path}.enum",
                               f"{who} enum values reordered", b, a)]
    return [semantic_change("enum_changed", "parameter", eid, f"{path}.enum",
                            f"{who} enum changed: {delta}", b, a)]


def _added(tool_id: str, base: str, p: Param) -> Change:
    return semantic_change("added", "parameter", f"{tool_id}.{p.name}",
                           f"{base}.properties.{p.name}",
                           f"tool {tool_id} parameter {p.name} added ({_req(p)})",
                           None, _param_value(p))


def _removed(tool_id: str, base: str, p: Param) -> Change:
    return semantic_change("removed", "parameter", f"{tool_id}.{p.name}",
                           f"{base}.properties.{p.name}",
                           f"tool {tool_id} parameter {p.name} removed ({_req(p)})",
                           _param_value(p), None)


def _param_value(p: Param) -> dict:
    return {"name": p.name, "schema": p.schema, "required": p.required}


def _req(p: Param) -> str:
    return "required" if p.required else "optional"
