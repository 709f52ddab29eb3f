"""Import of real logged conversations (JSONL) into `Trajectory`s.

One JSON object per line:

    {"id": "live-0001", "harness_version": "live-stream-avatar:3",
     "messages": [{"role": "user", "content": "P1001 多少钱？"},
                  {"role": "assistant", "content": "", "tool_calls": [{"id": "c1",
                   "type": "function", "function": {"name": "get_price",
                   "arguments": "{\\"product_id\\": \\"P1001\\"}"}}]},
                  {"role": "tool", "tool_call_id": "c1", "content": "{...}"},
                  {"role": "assistant", "content": "活动价89.9元～"}],
     "skill": "price_coupon", "kind": "price", "product_id": "P1001"}   # optional

`harness_version` must name the harness given to the import (one of `accepted_versions`, or a
prefix of at least 8 hex digits of its content hash). A row that is not JSON, breaks this
schema, calls a tool the harness does not have, or passes arguments its schema rejects is
reported with its line number (every problem of every row); it is never silently dropped.
Without a system message the harness's rendered prompt is put first. `skill` and `kind` are
inferred when absent (the skill from the first tool called; kind `log:<skill>`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hat_core.data.trajectory import Trajectory, products_in
from hat_core.errors import NotFoundError, Problem
from hat_core.harness.model import Harness
from hat_core.harness.render import render_tools
from hat_core.sim.binding import Binding, bind
from hat_core.sim.episode import episode_from_messages

ROLES = ("system", "user", "assistant", "tool")
ROW_KEYS = ("id", "harness_version", "messages", "skill", "kind", "product_id", "tools")


@dataclass(frozen=True)
class ImportResult:
    """The good rows as trajectories, every problem found, and how many rows were read."""

    trajectories: list[Trajectory]
    problems: list[Problem]
    rows_read: int

    @property
    def bad_lines(self) -> list[str]:
        return sorted({p.path for p in self.problems}, key=_line_number)


def _line_number(where: str) -> int:
    tail = where.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def version_names(ref: str) -> list[str]:
    """The `harness_version` values that name the harness given as `ref` on a command line:
    the ref itself, a file's stem (`v1` for `examples/harnesses/v1.yaml`), and for a stored
    version `LINE:N` also `N`."""
    if not ref:
        return []
    names = [ref, Path(ref).stem]
    if ":" in ref and ref.rsplit(":", 1)[-1].isdigit():
        names.append(ref.rsplit(":", 1)[-1])
    return list(dict.fromkeys(names))


def import_logs(path: str | Path, harness: Harness, *,
                accepted_versions: Sequence[str] = ()) -> ImportResult:
    """Read a JSONL log file against `harness`."""
    p = Path(path)
    if not p.is_file():
        raise NotFoundError(f"no such log file: {p}")
    binding = bind(harness)
    accepted = {str(v) for v in accepted_versions}
    trajectories, problems, read = [], [], 0
    with p.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            read += 1
            where = f"{p}:{number}"
            traj, errs = parse_row(line, where, binding, accepted)
            problems += [Problem(where, e) for e in errs]
            if traj is not None:
                trajectories.append(traj)
    return ImportResult(trajectories, problems, read)


def parse_row(line: str, where: str, binding: Binding, accepted: set[str]
              ) -> tuple[Trajectory | None, list[str]]:
    """One JSONL line: the trajectory, or None and every problem of the row."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, [f"not JSON ({exc.msg})"]
    if not isinstance(data, dict):
        return None, ["a row must be a JSON object"]
    errors = [f"unknown key {k!r}; valid: {', '.join(ROW_KEYS)}" for k in data
              if k not in ROW_KEYS]
    errors += _version_errors(data.get("harness_version"), binding.harness_hash, accepted)
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        return None, [*errors, "messages must be a non-empty list"]
    msgs, msg_errors = _messages(messages, binding)
    errors += msg_errors
    skill = _skill(data.get("skill"), binding, errors)
    if errors:
        return None, errors
    if msgs[0]["role"] != "system":
        msgs.insert(0, {"role": "system", "content": binding.rendered.system_prompt})
    return _trajectory(data, msgs, skill, binding, where), []


def _version_errors(version: Any, harness_hash: str, accepted: set[str]) -> list[str]:
    if version is None:
        return ["harness_version is missing"]
    v = str(version)
    if v in accepted or (len(v) >= 8 and harness_hash.startswith(v.lower())):
        return []
    valid = ", ".join(sorted(accepted) + [harness_hash[:12]])
    return [f"ran under harness version {v!r}, not the harness given ({valid})"]


def _messages(messages: list, binding: Binding) -> tuple[list[dict], list[str]]:
    out, errors, call_ids = [], [], set()
    for i, m in enumerate(messages):
        at = f"messages[{i}]"
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            errors.append(f"{at}: role must be one of {', '.join(ROLES)}")
            continue
        content = m.get("content")
        if content is not None and not isinstance(content, str):
            errors.append(f"{at}.content: must be a string or null")
        msg = {"role": m["role"], "content": content or ""}
        if m["role"] == "assistant":
            if m.get("reasoning_content"):
                msg["reasoning_content"] = str(m["reasoning_content"])
            calls = _calls(m.get("tool_calls") or [], at, binding, errors)
            call_ids |= {c["id"] for c in calls}
            if calls:
                msg["tool_calls"] = calls
            elif not (content or "").strip():
                errors.append(f"{at}: an assistant turn with no content and no tool calls")
        if m["role"] == "tool":
            if m.get("tool_call_id") not in call_ids:
                errors.append(f"{at}.tool_call_id: answers no earlier tool call")
            msg["tool_call_id"] = m.get("tool_call_id")
        out.append(msg)
    roles = [m["role"] for m in out]
    if "user" not in roles or "assistant" not in roles:
        errors.append("messages: needs at least one user and one assistant message")
    return out, errors


def _calls(calls: Any, at: str, binding: Binding, errors: list[str]) -> list[dict]:
    if not isinstance(calls, list):
        errors.append(f"{at}.tool_calls: must be a list")
        return []
    out = []
    for j, c in enumerate(calls):
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            errors.append(f"{at}.tool_calls[{j}]: needs function.name")
            continue
        args = fn.get("arguments", "{}")
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        tb = binding.tools_by_name.get(fn["name"])
        if tb is None:
            errors.append(f"{at}.tool_calls[{j}]: unknown tool {fn['name']!r}; valid: "
                          + ", ".join(binding.tools_by_name))
            continue
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            errors.append(f"{at}.tool_calls[{j}].arguments: not a JSON object")
        elif not tb.validator.is_valid(parsed):
            first = next(iter(tb.validator.iter_errors(parsed)))
            errors.append(f"{at}.tool_calls[{j}].arguments: {fn['name']}: {first.message}")
        out.append({"id": str(c.get("id") or f"call_{j}"), "type": "function",
                    "function": {"name": fn["name"], "arguments": text}})
    return out


def _skill(skill: Any, binding: Binding, errors: list[str]) -> str | None:
    if skill is None:
        return None
    if skill in binding.skill_names_by_id:
        return str(skill)
    if skill in binding.skill_ids_by_name:
        return binding.skill_ids_by_name[skill]
    errors.append(f"skill: unknown skill {skill!r}; valid: "
                  + ", ".join(binding.skill_names_by_id))
    return None


def _trajectory(data: dict, msgs: list[dict], skill: str | None, binding: Binding,
                where: str) -> Trajectory:
    episode = episode_from_messages(msgs, binding)
    inferred = next((t.skill for t in episode.turns if t.skill), None)
    text_products = sorted(products_in(" ".join(m.get("content") or "" for m in msgs[1:])))
    return Trajectory(
        messages=tuple(msgs), tools=tuple(render_tools(binding.harness)),
        harness_hash=binding.harness_hash, scenario_id=str(data.get("id") or where),
        kind=str(data.get("kind") or f"log:{skill or inferred or 'unknown'}"),
        skill=skill or inferred or "unknown",
        product_id=data.get("product_id") or (text_products[0] if text_products else None),
        source="import", teacher="live", retries=episode.retries)
