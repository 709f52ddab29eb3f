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

from hat_core.config_file import MAX_BYTES as MAX_BYTES  # the limits, re-exported
from hat_core.config_file import MAX_DEPTH as MAX_DEPTH
from hat_core.config_file import MAX_NODES as MAX_NODES
from hat_core.config_file import parse_yaml, read_text
from hat_core.errors import HarnessError, Problem
from hat_core.harness.check import check_document
from hat_core.harness.model import Harness


def load_harness(path: str | Path) -> Harness:
    """Read and validate a harness file (`.yaml`, `.yml` or `.json`)."""
    text = read_text(path, what="harness", error=HarnessError)
    return parse_harness(text, source=str(path))


def parse_harness(text: str, *, source: str = "<text>") -> Harness:
    """Parse YAML or JSON text into a validated `Harness`."""
    return harness_from_data(parse_document(text, source=source), source=source)


def parse_document(text: str, *, source: str = "<text>") -> Any:
    """Parse YAML (a superset of JSON) with size, depth and alias-expansion limits
    (`hat_core.config_file`, the reader every config file shares)."""
    return parse_yaml(text, source=source, error=HarnessError)


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
