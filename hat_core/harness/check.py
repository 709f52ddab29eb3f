"""Semantic checks of a harness document, run on the raw parsed data.

They run even when the structure is broken (so one report lists everything) and therefore
read the data defensively. Structure (types, required and unknown fields) is pydantic's job in
`hat_core.harness.io`; this module owns the rules that span fields: unique ids and names,
references, JSON Schemas, hook events and patterns, prompt placeholders, identifiers, limits.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from typing import Any

import jsonschema

from hat_core.errors import Problem
from hat_core.harness.model import BUILTIN_PLACEHOLDERS, HOOK_EVENTS, IDENTIFIER, PLACEHOLDER

MAX_ITEMS = 256
MAX_TEXT = 8_000
ID_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$")


def check_document(data: dict) -> list[Problem]:
    """Every rule violation in a harness document, each with its path."""
    problems: list[Problem] = []
    skills, tools = _items(data, "skills"), _items(data, "tools")
    hooks = _items(data, "hooks")
    problems += _check_unique("skills", skills, ("id", "name"))
    problems += _check_unique("tools", tools, ("id", "name"))
    problems += _check_unique("hooks", hooks, ("id",))
    problems += _check_limits(data)
    tool_ids = {t.get("id") for _, t in tools if isinstance(t.get("id"), str)}
    for i, skill in skills:
        problems += _check_skill(i, skill, tool_ids)
    for i, tool in tools:
        problems += _check_tool(i, tool)
    for i, hook in hooks:
        problems += _check_hook(i, hook)
    problems += _check_prompt(data.get("prompt"))
    return problems


def _items(data: dict, key: str) -> list[tuple[int, dict]]:
    value = data.get(key)
    if not isinstance(value, list):
        return []
    return [(i, it) for i, it in enumerate(value) if isinstance(it, dict)]


def _check_unique(section: str, items: list[tuple[int, dict]], keys: tuple[str, ...]):
    problems = []
    for key in keys:
        counts = Counter(it.get(key) for _, it in items if isinstance(it.get(key), str))
        seen: set[str] = set()
        for i, it in items:
            value = it.get(key)
            if isinstance(value, str) and counts[value] > 1:
                if value in seen:
                    problems.append(Problem(f"{section}[{i}].{key}", f"duplicate {key} {value!r}"))
                seen.add(value)
    return problems


def _check_limits(data: dict) -> list[Problem]:
    problems = []
    for key in ("skills", "tools", "hooks"):
        value = data.get(key)
        if isinstance(value, list) and len(value) > MAX_ITEMS:
            problems.append(Problem(key, f"{len(value)} entries, over the limit of {MAX_ITEMS}"))
    for path, text in _texts(data, ""):
        if len(text) > MAX_TEXT:
            problems.append(Problem(path, f"text of {len(text)} characters, over {MAX_TEXT}"))
    return problems


def _texts(value: Any, path: str):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _texts(v, f"{path}[{i}]")


def _check_identifier(path: str, value: Any, what: str) -> list[Problem]:
    if isinstance(value, str) and not IDENTIFIER.match(value):
        return [Problem(path, f"{what} {value!r} is not a valid identifier "
                              "(letters, digits, _ or -, starting with a letter or _, max 64)")]
    return []


def _check_id(path: str, value: Any) -> list[Problem]:
    if isinstance(value, str) and not ID_PATTERN.match(value):
        return [Problem(path, f"id {value!r} must be 1-128 characters of letters, digits, _ . : -")]
    return []


def _check_skill(i: int, skill: dict, tool_ids: set) -> list[Problem]:
    base = f"skills[{i}]"
    problems = _check_identifier(f"{base}.name", skill.get("name"), "skill name")
    problems += _check_id(f"{base}.id", skill.get("id"))
    refs = skill.get("tools")
    if isinstance(refs, list):
        counts = Counter(r for r in refs if isinstance(r, str))
        for j, ref in enumerate(refs):
            if isinstance(ref, str) and ref not in tool_ids:
                problems.append(Problem(f"{base}.tools[{j}]", f"unknown tool {ref!r}"))
            elif isinstance(ref, str) and counts[ref] > 1 and refs.index(ref) != j:
                problems.append(Problem(f"{base}.tools[{j}]", f"tool {ref!r} listed twice"))
    return problems


def _check_tool(i: int, tool: dict) -> list[Problem]:
    base = f"tools[{i}]"
    problems = _check_identifier(f"{base}.name", tool.get("name"), "tool name")
    problems += _check_id(f"{base}.id", tool.get("id"))
    params = tool.get("parameters")
    if params is None or not isinstance(params, dict):
        return problems
    path = f"{base}.parameters"
    key = _shape_key(params)
    if key is None or not _schema_shape_valid(key):
        try:  # the real schema again, for the error's own path and message
            jsonschema.Draft202012Validator.check_schema(params)
        except jsonschema.SchemaError as exc:
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in exc.path)
            return problems + [Problem(path + where, f"invalid JSON Schema: {exc.message}")]
    if params.get("type") != "object":
        problems.append(Problem(f"{path}.type", "tool parameters must be a JSON Schema of "
                                                "type 'object'"))
    props = params.get("properties", {})
    if isinstance(props, dict):
        for name in props:
            problems += _check_identifier(f"{path}.properties.{name}", name, "parameter name")
        for j, req in enumerate(params.get("required", []) or []):
            if isinstance(req, str) and req not in props:
                problems.append(Problem(f"{path}.required[{j}]",
                                        f"required parameter {req!r} is not in properties"))
    return problems


def _shape(schema: Any) -> Any:
    """`schema` with what the meta-schema cannot tell apart made equal: property names become
    `p0, p1, ...` (in `properties` and `required` alike) and string descriptions and titles
    empty. The meta-schema only checks that such names and texts are strings, so the shape
    is a valid schema exactly when `schema` is; HSA variants (renamed parameters, reworded
    descriptions) then share one check."""
    if isinstance(schema, list):
        return [_shape(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    props = schema.get("properties")
    names = {n: f"p{i}" for i, n in enumerate(props)} if isinstance(props, dict) else {}
    out = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {names[n]: _shape(v) for n, v in value.items()}
        elif key == "required" and isinstance(value, list):
            out[key] = [names.get(v, v) if isinstance(v, str) else v for v in value]
        elif key in ("description", "title") and isinstance(value, str):
            out[key] = ""
        else:
            out[key] = _shape(value)
    return out


def _shape_key(schema: dict) -> str | None:
    """The cache key of a schema's shape; None when it is not plain JSON (checked uncached)."""
    try:
        return json.dumps(_shape(schema), sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=4096)
def _schema_shape_valid(key: str) -> bool:
    try:
        jsonschema.Draft202012Validator.check_schema(json.loads(key))
    except jsonschema.SchemaError:
        return False
    return True


def _check_hook(i: int, hook: dict) -> list[Problem]:
    base = f"hooks[{i}]"
    problems = _check_id(f"{base}.id", hook.get("id"))
    event = hook.get("event")
    if isinstance(event, str) and event not in HOOK_EVENTS:
        problems.append(Problem(f"{base}.event",
                                f"unknown hook event {event!r}; valid: {', '.join(HOOK_EVENTS)}"))
    cond = hook.get("condition")
    if isinstance(cond, dict) and isinstance(cond.get("patterns"), list):
        for j, pattern in enumerate(cond["patterns"]):
            if isinstance(pattern, str):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    problems.append(Problem(f"{base}.condition.patterns[{j}]",
                                            f"invalid regular expression: {exc}"))
    if isinstance(cond, dict) and isinstance(cond.get("words"), list) and not cond["words"]:
        problems.append(Problem(f"{base}.condition.words", "needs at least one word"))
    return problems


def _check_prompt(prompt: Any) -> list[Problem]:
    if not isinstance(prompt, dict):
        return []
    problems = []
    variables = prompt.get("variables") or {}
    if not isinstance(variables, dict):
        variables = {}
    for name, value in variables.items():
        if value is None or (isinstance(value, str) and not value.strip()):
            problems.append(Problem(f"prompt.variables.{name}", "variable is declared but empty"))
    sections = prompt.get("sections")
    if not isinstance(sections, list):
        return problems
    if not sections:
        problems.append(Problem("prompt.sections", "needs at least one section"))
    problems += _check_unique("prompt.sections",
                              [(i, s) for i, s in enumerate(sections) if isinstance(s, dict)],
                              ("id",))
    known = set(BUILTIN_PLACEHOLDERS) | set(variables)
    for i, section in enumerate(sections):
        body = section.get("body") if isinstance(section, dict) else None
        if not isinstance(body, str):
            continue
        for name in PLACEHOLDER.findall(body):
            if name not in known:
                problems.append(Problem(
                    f"prompt.sections[{i}].body",
                    f"unknown placeholder {{{name}}}; valid: "
                    + ", ".join(sorted(known))))
    return problems
