"""Harness hooks at their lifecycle events: which fire, and what they do to a step.

Events and the conditions checked there:
- `before_tool_call`: `argument_schema` (the call's arguments fail the tool's JSON Schema),
  `forbidden_words` / `forbidden_patterns` (on the arguments' JSON text).
- `after_tool_call`: `forbidden_words` / `forbidden_patterns` on the result's text.
- `on_tool_error`: `max_retries` fires once the tool errors of the current viewer turn reach
  `limit`.
- `before_response`: `forbidden_words`, `forbidden_patterns`, `price_from_tool` (a price in
  the reply, a number after ¥/￥ or before 元/块, that no tool result of the episode holds).

Actions: `block_retry` (the step is rejected and the hook message goes back to the policy),
`rewrite` (matched text is replaced with `replacement`; checking continues), `handoff` (the
episode ends with the hook message). `compile_hooks(harness)` is cached per harness hash.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from hat_core.harness.model import (
    ArgumentSchema,
    ForbiddenPatterns,
    ForbiddenWords,
    Harness,
    Hook,
    MaxRetries,
    PriceFromTool,
    Rewrite,
)
from hat_core.sim.binding import harness_hash

PRICE = re.compile(r"[¥￥]\s*(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*(?:元|块)")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class CompiledHook:
    hook: Hook
    regex: re.Pattern | None  # forbidden words / patterns as one expression


@dataclass(frozen=True)
class HookSet:
    """A harness's hooks grouped by event, patterns compiled."""

    by_event: dict[str, tuple[CompiledHook, ...]]

    def at(self, event: str) -> tuple[CompiledHook, ...]:
        return self.by_event.get(event, ())


@dataclass(frozen=True)
class Firing:
    """One hook that fired: at which event, what it did and what it said."""

    hook_id: str
    event: str
    action: str
    message: str


_CACHE: dict[str, HookSet] = {}


def compile_hooks(harness: Harness) -> HookSet:
    """The harness's hooks by event (cached by content hash)."""
    key = harness_hash(harness)
    hit = _CACHE.get(key)
    if hit is None:
        groups: dict[str, list[CompiledHook]] = {}
        for hook in harness.hooks:
            groups.setdefault(hook.event, []).append(CompiledHook(hook, _regex(hook)))
        hit = HookSet({k: tuple(v) for k, v in groups.items()})
        if len(_CACHE) > 64:
            _CACHE.clear()
        _CACHE[key] = hit
    return hit


def _regex(hook: Hook) -> re.Pattern | None:
    cond = hook.condition
    if isinstance(cond, ForbiddenWords):
        return re.compile("|".join(re.escape(w) for w in cond.words)) if cond.words else None
    if isinstance(cond, ForbiddenPatterns):
        return re.compile("|".join(f"(?:{p})" for p in cond.patterns)) if cond.patterns else None
    return None


def prices_in(text: str) -> list[float]:
    """Prices a text states: numbers after ¥/￥ or before 元/块."""
    return [float(a or b) for a, b in PRICE.findall(text)]


def numbers_in(value) -> set[float]:
    """Every number in a tool result (JSON value or text), rounded to cents."""
    out: set[float] = set()
    _collect(value, out)
    return out


def _collect(value, out: set[float]) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        out.add(round(float(value), 2))
    elif isinstance(value, str):
        out.update(round(float(x), 2) for x in NUMBER.findall(value))
    elif isinstance(value, dict):
        for v in value.values():
            _collect(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect(v, out)


def ungrounded_prices(text: str, grounded: Iterable[float]) -> list[float]:
    """Prices in `text` that are not among the `grounded` numbers."""
    known = set(grounded)
    return [p for p in prices_in(text) if round(p, 2) not in known]


def check_response(hooks: HookSet, text: str, grounded: set[float]
                   ) -> tuple[Firing | None, str, tuple[Firing, ...]]:
    """Run the before_response hooks: (blocking firing or None, final text, rewrites)."""
    rewrites: list[Firing] = []
    for ch in hooks.at("before_response"):
        cond = ch.hook.condition
        if isinstance(cond, PriceFromTool):
            hit = bool(ungrounded_prices(text, grounded))
        else:
            hit = ch.regex is not None and ch.regex.search(text) is not None
        if not hit:
            continue
        if isinstance(ch.hook.action, Rewrite):
            if ch.regex is not None:
                text = ch.regex.sub(ch.hook.action.replacement, text)
            rewrites.append(_firing(ch.hook))
            continue
        return _firing(ch.hook), text, tuple(rewrites)
    return None, text, tuple(rewrites)


def check_call(hooks: HookSet, schema_ok: bool, args_text: str) -> Firing | None:
    """The first before_tool_call hook that fires on a call (rewrites are recorded only)."""
    for ch in hooks.at("before_tool_call"):
        cond = ch.hook.condition
        if isinstance(cond, ArgumentSchema):
            hit = not schema_ok
        else:
            hit = ch.regex is not None and ch.regex.search(args_text) is not None
        if hit:
            return _firing(ch.hook)
    return None


def check_result(hooks: HookSet, result_text: str) -> Firing | None:
    """The first after_tool_call hook that fires on a tool result's text."""
    for ch in hooks.at("after_tool_call"):
        if ch.regex is not None and ch.regex.search(result_text) is not None:
            return _firing(ch.hook)
    return None


def check_error(hooks: HookSet, errors_in_turn: int) -> Firing | None:
    """The first on_tool_error hook that fires after a failed tool call."""
    for ch in hooks.at("on_tool_error"):
        cond = ch.hook.condition
        if isinstance(cond, MaxRetries) and errors_in_turn >= cond.limit:
            return _firing(ch.hook)
    return None


def _firing(hook: Hook) -> Firing:
    action = hook.action
    return Firing(hook_id=hook.id, event=hook.event, action=action.type,
                  message=getattr(action, "message", "") or getattr(action, "replacement", ""))
