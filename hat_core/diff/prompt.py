"""The prompt part of a harness diff: sections, variables, style and language.

Sections are matched by id. An added or removed section is semantic; a new title or order is
surface. An edited body is surface (a rewording) unless the section is a rules section
(`RULE_SECTION_IDS`) or the edit changes the set of `{placeholders}`: both are semantic. Each
body edit carries a unified text diff. Prompt variables are facts the model states (shop
name, host name): added, removed or changed values are semantic. Style and language are
surface (HSA re-templates both).
"""

from __future__ import annotations

import difflib
import json

from hat_core.diff.match import match
from hat_core.diff.result import Change, list_delta, semantic_change, show, surface_change
from hat_core.harness.model import PLACEHOLDER, Prompt, PromptStyle, Section

RULE_SECTION_IDS = frozenset({"rules"})
VARIABLE_VERBS = {"added": "added", "removed": "removed", "value_changed": "changed"}


def diff_prompt(before: Prompt, after: Prompt) -> list[Change]:
    """Every change of the prompt template: language, style, variables, sections."""
    return (_language(before, after) + _style(before.style, after.style)
            + _variables(before.variables, after.variables)
            + _sections(before.sections, after.sections))


def unified_text_diff(before: str, after: str, path: str) -> str:
    """A unified diff of two texts, line by line, labelled with `path`."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(),
                                 fromfile=f"a/{path}", tofile=f"b/{path}", lineterm="")
    return "\n".join(lines)


def _language(before: Prompt, after: Prompt) -> list[Change]:
    if before.language == after.language:
        return []
    return [surface_change("language_changed", "prompt", "prompt", "prompt.language",
                           f"prompt language changed: {before.language} -> {after.language}",
                           before.language, after.language)]


def _style(before: PromptStyle, after: PromptStyle) -> list[Change]:
    out = []
    for name in PromptStyle.model_fields:
        b, a = getattr(before, name), getattr(after, name)
        if b != a:
            out.append(surface_change(
                "restyled", "prompt", "prompt", f"prompt.style.{name}",
                f"prompt style {name} changed: {_quoted(b)} -> {_quoted(a)}", b, a))
    return out


def _variables(before: dict[str, str], after: dict[str, str]) -> list[Change]:
    out = []
    for name in dict.fromkeys([*before, *after]):
        b, a = before.get(name), after.get(name)
        if b == a:
            continue
        kind = "added" if b is None else "removed" if a is None else "value_changed"
        out.append(semantic_change(
            kind, "variable", name, f"prompt.variables.{name}",
            f"prompt variable {name} {VARIABLE_VERBS[kind]}: {show(b)} -> {show(a)}", b, a))
    return out


def _sections(before: tuple[Section, ...], after: tuple[Section, ...]) -> list[Change]:
    m = match(before, after, lambda s: s.id)
    out = [_added_or_removed("removed", s) for s in m.removed]
    out += [_added_or_removed("added", s) for s in m.added]
    for pair in m.pairs:
        out += _section_changes(pair.before, pair.after)
    if m.reordered:
        out.append(surface_change("reordered", "section", "", "prompt.sections",
                                  "prompt sections reordered",
                                  m.after_keys_in_before_order(lambda s: s.id),
                                  [p.after.id for p in m.pairs]))
    return out


def _added_or_removed(kind: str, s: Section) -> Change:
    value = s.model_dump()
    before, after = (None, value) if kind == "added" else (value, None)
    return semantic_change(kind, "section", s.id, f"prompt.sections[{s.id}]",
                           f"section {s.id} {kind}: {s.title}", before, after)


def _section_changes(b: Section, a: Section) -> list[Change]:
    out = []
    if b.title != a.title:
        out.append(surface_change("renamed", "section", a.id, f"prompt.sections[{a.id}].title",
                                  f"section {a.id} title renamed: {b.title} -> {a.title}",
                                  b.title, a.title))
    if b.body != a.body:
        out.append(_body_change(b, a))
    return out


def _body_change(b: Section, a: Section) -> Change:
    path = f"prompt.sections[{a.id}].body"
    text = unified_text_diff(b.body, a.body, path)
    old, new = _placeholders(b.body), _placeholders(a.body)
    if old != new:
        summary = f"section {a.id} body edited, placeholders changed: {list_delta(old, new)}"
        return semantic_change("edited", "section", a.id, path, summary, b.body, a.body, text)
    if a.id in RULE_SECTION_IDS:
        summary = f"section {a.id} body edited (a rules section)"
        return semantic_change("edited", "section", a.id, path, summary, b.body, a.body, text)
    return surface_change("edited", "section", a.id, path, f"section {a.id} body reworded",
                          b.body, a.body, text)


def _placeholders(body: str) -> list[str]:
    return sorted({f"{{{name}}}" for name in PLACEHOLDER.findall(body)})


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)
