"""The hook part of a harness diff: lifecycle checks matched by id.

An added or removed hook, a new event, a new condition or action type, and any changed
condition parameter (forbidden words, patterns, retry limit) are semantic: they change what
the harness enforces. A reworded action message or replacement and a reworded description
are surface (HSA varies hook messages). A new hook order is surface.
"""

from __future__ import annotations

from hat_core.diff.match import match
from hat_core.diff.result import Change, list_delta, semantic_change, show, surface_change
from hat_core.harness.model import Hook


def diff_hooks(before: tuple[Hook, ...], after: tuple[Hook, ...]) -> list[Change]:
    """Every hook change between two versions."""
    m = match(before, after, lambda h: h.id)
    out = [_added_or_removed("removed", h) for h in m.removed]
    out += [_added_or_removed("added", h) for h in m.added]
    for pair in m.pairs:
        out += hook_changes(pair.before, pair.after)
    if m.reordered:
        out.append(surface_change("reordered", "hook", "", "hooks", "hooks reordered",
                                  m.after_keys_in_before_order(lambda h: h.id),
                                  [p.after.id for p in m.pairs]))
    return out


def hook_changes(b: Hook, a: Hook) -> list[Change]:
    """The changes of one hook: event, condition, action, description."""
    out = []
    if b.event != a.event:
        out.append(semantic_change("event_changed", "hook", a.id, f"hooks[{a.id}].event",
                                   f"hook {a.id} event changed: {b.event} -> {a.event}",
                                   b.event, a.event))
    out += _part_changes(a.id, "condition", b.condition, a.condition)
    out += _part_changes(a.id, "action", b.action, a.action)
    if b.description != a.description:
        out.append(surface_change("redescribed", "hook", a.id, f"hooks[{a.id}].description",
                                  f"hook {a.id} description reworded",
                                  b.description, a.description))
    return out


def _part_changes(hook_id: str, part: str, b, a) -> list[Change]:
    """A condition or action: a new type replaces it; else compare field by field."""
    path = f"hooks[{hook_id}].{part}"
    if b.type != a.type:
        return [semantic_change(f"{part}_changed", "hook", hook_id, path,
                                f"hook {hook_id} {part} type changed: {b.type} -> {a.type}",
                                b.model_dump(), a.model_dump())]
    fields = [f for f in type(a).model_fields if f != "type"]
    changer = _rule_change if part == "condition" else _wording_change
    return [changer(hook_id, f"{path}.{f}", f, getattr(b, f), getattr(a, f))
            for f in fields if getattr(b, f) != getattr(a, f)]


def _rule_change(hook_id: str, path: str, field: str, b, a) -> Change:
    delta = list_delta(b, a) if isinstance(b, tuple) else f"{show(b)} -> {show(a)}"
    if not delta:
        return surface_change("reordered", "hook", hook_id, path,
                              f"hook {hook_id} {field} reordered", b, a)
    return semantic_change("rule_changed", "hook", hook_id, path,
                           f"hook {hook_id} {field} changed: {delta}", b, a)


def _wording_change(hook_id: str, path: str, field: str, b, a) -> Change:
    return surface_change("redescribed", "hook", hook_id, path,
                          f"hook {hook_id} action {field} reworded", b, a)


def _added_or_removed(kind: str, h: Hook) -> Change:
    value = h.model_dump()
    before, after = (None, value) if kind == "added" else (value, None)
    summary = f"hook {h.id} {kind}: {h.event} {h.condition.type} -> {h.action.type}"
    return semantic_change(kind, "hook", h.id, f"hooks[{h.id}]", summary, before, after)
