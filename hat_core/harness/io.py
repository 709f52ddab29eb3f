"""Loading, validating and dumping harness documents (YAML or JSON).

`load_harness(path)` / `parse_harness(text)` return a valid `Harness` or raise `HarnessError`
listing every problem with its path, e.g. `skills[2].tools[0]: unknown tool 'get_price'`.
Hostile input is refused early: files over `MAX_BYTES`, nesting over `MAX_DEPTH`, and YAML
alias graphs that would expand past `MAX_NODES` (a "billion laughs" document).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from hat_core.errors import HarnessError, Problem
from hat_core.harness.check import check_document
from hat_core.harness.model import Harness

MAX_BYTES = 1_000_000
MAX_DEPTH = 32
MAX_NODES = 200_000


def load_harness(path: str | Path) -> Harness:
    """Read and validate a harness file (`.yaml`, `.yml` or `.json`)."""
    p = Path(path)
    if not p.is_file():
        raise HarnessError(f"{p}: no such harness file")
    size = p.stat().st_size
    if size > MAX_BYTES:
        raise HarnessError(f"{p}: file is {size} bytes, over the {MAX_BYTES}-byte limit")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise HarnessError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    return parse_harness(text, source=str(p))


def parse_harness(text: str, *, source: str = "<text>") -> Harness:
    """Parse YAML or JSON text into a validated `Harness`."""
    return harness_from_data(parse_document(text, source=source), source=source)


def parse_document(text: str, *, source: str = "<text>") -> Any:
    """Parse YAML (a superset of JSON) with size, depth and alias-expansion limits."""
    if len(text.encode("utf-8", errors="replace")) > MAX_BYTES:
        raise HarnessError(f"{source}: document is over the {MAX_BYTES}-byte limit")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise HarnessError(f"{source}: not valid YAML or JSON: {_yaml_reason(exc)}") from exc
    except RecursionError as exc:
        raise HarnessError(f"{source}: nesting is deeper than {MAX_DEPTH} levels") from exc
    if node is None:
        raise HarnessError(f"{source}: the document is empty")
    _check_graph(node, source)
    try:
        return yaml.SafeLoader(text).get_single_data()
    except (yaml.YAMLError, ValueError, TypeError) as exc:
        raise HarnessError(f"{source}: cannot construct the document: {exc}") from exc


def harness_from_data(data: Any, *, source: str = "<data>") -> Harness:
    """Validate a parsed document and build the `Harness`; every problem at once."""
    if not isinstance(data, dict):
        raise HarnessError(
            f"{source}: invalid harness: the document must be a mapping, "
            f"got {type(data).__name__}"
        )
    data = _fill_ids(data)
    problems = _structure_problems(data)
    problems += check_document(data)
    if problems:
        unique = list(dict.fromkeys(problems))
        raise HarnessError(f"{source}: invalid harness ({len(unique)} problems)", unique)
    return Harness.model_validate(data)


def dump_harness(harness: Harness, fmt: str = "yaml") -> str:
    """Serialise a harness as YAML (readable, keys in model order) or canonical JSON."""
    data = harness.model_dump(mode="json")
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)
    raise ValueError(f"unknown format {fmt!r}; valid: yaml, json")


def _fill_ids(data: dict) -> dict:
    """A skill or tool without an `id` takes its name as id (the diff then matches by
    similarity instead)."""
    out = dict(data)
    for key in ("skills", "tools"):
        items = out.get(key)
        if isinstance(items, list):
            out[key] = [
                {**it, "id": it["name"]}
                if isinstance(it, dict) and "id" not in it and isinstance(it.get("name"), str)
                else it
                for it in items
            ]
    return out


def _structure_problems(data: dict) -> list[Problem]:
    try:
        Harness.model_validate(data)
    except ValidationError as exc:
        return [_pydantic_problem(err) for err in exc.errors()]
    return []


def _pydantic_problem(err: dict) -> Problem:
    loc = [part for part in err["loc"] if not _is_union_tag(part)]
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown field"
    elif err["type"] == "missing":
        msg = "required field is missing"
    elif err["type"] == "union_tag_invalid":
        msg = f"unknown type {err.get('input', {}).get('type')!r}; valid: " + ", ".join(
            str(err["ctx"]["expected_tags"]).replace("'", "").split(", ")
        )
    return Problem(format_path(loc), msg)


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and part in {
        "forbidden_words", "forbidden_patterns", "price_from_tool", "argument_schema",
        "max_retries", "block_retry", "rewrite", "handoff",
    }


def format_path(loc: list | tuple) -> str:
    """`['skills', 2, 'tools', 0]` -> `skills[2].tools[0]`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _check_graph(root: yaml.Node, source: str) -> None:
    """Refuse documents whose alias-expanded size or nesting exceeds the limits."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    on_path: set[int] = set()
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            if sizes[key] > MAX_NODES:
                raise HarnessError(
                    f"{source}: the document expands to over {MAX_NODES} nodes "
                    "(YAML aliases?); refused"
                )
            continue
        if depth > MAX_DEPTH:
            raise HarnessError(f"{source}: nesting is deeper than {MAX_DEPTH} levels")
        if key in sizes:
            continue
        if key in on_path:
            raise HarnessError(f"{source}: the document refers to itself through an alias")
        on_path.add(key)
        _check_duplicate_keys(node, source)
        stack.append((node, depth, True))
        for child in _children(node):
            stack.append((child, depth + 1, False))


def _check_duplicate_keys(node: yaml.Node, source: str) -> None:
    """PyYAML keeps the last of two equal keys silently; refuse them instead."""
    if not isinstance(node, yaml.MappingNode):
        return
    seen: set[str] = set()
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            if key_node.value in seen:
                line = key_node.start_mark.line + 1
                raise HarnessError(f"{source}: duplicate key {key_node.value!r} (line {line})")
            seen.add(key_node.value)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _yaml_reason(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(problem)
