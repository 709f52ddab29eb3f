"""The semantic diff of two harness versions: what changed, and whether it matters.

    from hat_core.diff.api import diff_harness, format_diff
    d = diff_harness(load_harness("v1.yaml"), load_harness("v2.yaml"))
    d.is_surface_only, d.semantic, print(format_diff(d)), json.dumps(d.to_dict())

or on the command line: `hat harness diff v1.yaml v2.yaml [--json]`. Pure: no I/O.

Matching. Skills, tools, prompt sections and hooks are matched by id; skills and tools whose
id is missing (id := name on load) are paired by similarity (`hat_core.diff.match`) and
reported as renamed. Parameters are matched by name, then left-overs by combined evidence
(`hat_core.diff.param_match`, the matcher the simulator binds with): a plausible pair has a
similar description, or identical schema and required-ness, or a compatible type and a shared
name word; the best-scoring pairs (description, schema, required-ness, name, position) are taken
first. A pair's other differences are reported besides the rename.

Classification. *Surface* is what HSA varies and a model trained with HSA should already
handle: renames, rewording, reordering, style. *Semantic* is a new or lost capability, a
changed call schema or a changed rule. In detail:

- harness: description reworded is surface; a changed harness line is semantic.
- skill: renamed; description, instructions or triggers reworded; its tools reordered:
  surface. Added, removed, or a tool id added to / removed from it: semantic.
- tool: renamed; description or returns reworded: surface. Added, removed: semantic.
- parameter: renamed (paired by evidence, above; any other difference of the pair is reported
  besides); description/title reworded; parameters
  reordered: surface. Added, removed; type, required, enum or any other keyword (minimum,
  maximum, items, pattern, ...) changed: semantic.
- section: title renamed; body reworded; sections reordered: surface. Added, removed; the
  body of a rules section (`RULE_SECTION_IDS`, i.e. `rules`) edited; a body edit that
  changes the set of `{placeholders}`: semantic. Every body edit carries a unified diff.
- prompt: style or language changed: surface. A variable added, removed or given a new
  value (variables are facts the model states): semantic.
- hook: action message/replacement or description reworded; hooks reordered: surface.
  Added, removed; event, condition type or action type changed; condition parameters
  (words, patterns, limit) changed: semantic.

The rule is syntactic: a reworded instruction that in fact changes meaning is still reported
as surface; only the rules section and placeholder changes are treated as meaningful text.
Changes come in a stable order: harness, skills, tools (with their parameters), prompt, hooks;
within each, removed, added, then changed elements in after order, then any reordering.
"""

from __future__ import annotations

from hat_core.diff.hooks import diff_hooks
from hat_core.diff.match import Matching, match_skills, match_tools
from hat_core.diff.prompt import RULE_SECTION_IDS, diff_prompt, unified_text_diff
from hat_core.diff.result import (
    SEMANTIC,
    SURFACE,
    Change,
    HarnessDiff,
    list_delta,
    semantic_change,
    surface_change,
)
from hat_core.diff.schema import diff_parameters
from hat_core.harness.model import Harness, Skill, Tool

__all__ = [
    "SEMANTIC", "SURFACE", "RULE_SECTION_IDS", "Change", "HarnessDiff",
    "diff_harness", "format_diff", "unified_text_diff",
]


def diff_harness(before: Harness, after: Harness) -> HarnessDiff:
    """Every change from `before` to `after`, each classified surface or semantic."""
    tools = match_tools(before.tools, after.tools)
    tool_map = {p.before.id: p.after.id for p in tools.pairs}
    skills = match_skills(before.skills, after.skills, tool_map)
    changes = (_harness_changes(before, after) + _skill_changes(skills, tool_map)
               + _tool_changes(tools) + diff_prompt(before.prompt, after.prompt)
               + diff_hooks(before.hooks, after.hooks))
    return HarnessDiff(tuple(changes))


def format_diff(diff: HarnessDiff) -> str:
    """Readable report: a headline, one line per change grouped by class, then text diffs."""
    if diff.is_empty:
        return "no changes"
    lines = [_headline(diff)]
    for name, group in ((SURFACE, diff.surface), (SEMANTIC, diff.semantic)):
        lines += ["", f"{name} ({len(group)}):"]
        lines += [f"[{c.classification}] {c.summary}" for c in group] or ["none"]
    texts = [c.text_diff for c in diff.changes if c.text_diff]
    if texts:
        lines += ["", "section text diffs:", *texts]
    return "\n".join(lines)


def _headline(diff: HarnessDiff) -> str:
    verdict = "surface only" if diff.is_surface_only else "semantic"
    return (f"{len(diff.changes)} changes ({len(diff.surface)} surface, "
            f"{len(diff.semantic)} semantic): {verdict}")


def _harness_changes(before: Harness, after: Harness) -> list[Change]:
    out = []
    if before.harness != after.harness:
        out.append(semantic_change("line_changed", "harness", after.harness, "harness",
                                   f"harness line changed: {before.harness} -> {after.harness}",
                                   before.harness, after.harness))
    if before.description != after.description:
        out.append(surface_change("redescribed", "harness", after.harness, "description",
                                  "harness description reworded",
                                  before.description, after.description))
    return out


def _skill_changes(m: Matching[Skill], tool_map: dict[str, str]) -> list[Change]:
    out = [_added_or_removed("skill", "removed", s) for s in m.removed]
    out += [_added_or_removed("skill", "added", s) for s in m.added]
    for pair in m.pairs:
        out += _renamed("skill", pair)
        out += _reworded("skill", pair.before, pair.after,
                         ("description", "instructions", "triggers"))
        out += _skill_tool_changes(pair.before, pair.after, tool_map)
    return out + _reordered("skill", m)


def _tool_changes(m: Matching[Tool]) -> list[Change]:
    out = [_added_or_removed("tool", "removed", t) for t in m.removed]
    out += [_added_or_removed("tool", "added", t) for t in m.added]
    for pair in m.pairs:
        out += _renamed("tool", pair)
        out += _reworded("tool", pair.before, pair.after, ("description", "returns"))
        out += diff_parameters(pair.after.id, pair.before, pair.after)
    return out + _reordered("tool", m)


def _skill_tool_changes(b: Skill, a: Skill, tool_map: dict[str, str]) -> list[Change]:
    mapped = [tool_map.get(t, t) for t in b.tools]
    path = f"skills[{a.id}].tools"
    if set(mapped) != set(a.tools):
        return [semantic_change("tools_changed", "skill", a.id, path,
                                f"skill {a.id} tools changed: {list_delta(mapped, a.tools)}",
                                b.tools, a.tools)]
    if mapped != list(a.tools):
        return [surface_change("reordered", "skill", a.id, path,
                               f"skill {a.id} tools reordered", b.tools, a.tools)]
    return []


def _renamed(element: str, pair) -> list[Change]:
    b, a = pair.before, pair.after
    if b.name == a.name and b.id == a.id:
        return []
    how = f" (no stable id; matched by similarity {pair.score:.2f})" if pair.inferred else ""
    return [surface_change("renamed", element, a.id, f"{element}s[{a.id}].name",
                           f"{element} {a.id} renamed: {b.name} -> {a.name}{how}",
                           b.name, a.name)]


def _reworded(element: str, b, a, fields: tuple[str, ...]) -> list[Change]:
    return [surface_change("redescribed", element, a.id, f"{element}s[{a.id}].{f}",
                           f"{element} {a.id} {f} reworded", getattr(b, f), getattr(a, f))
            for f in fields if getattr(b, f) != getattr(a, f)]


def _reordered(element: str, m: Matching) -> list[Change]:
    if not m.reordered:
        return []
    return [surface_change("reordered", element, "", f"{element}s", f"{element}s reordered",
                           m.after_keys_in_before_order(lambda e: e.id),
                           [p.after.id for p in m.pairs])]


def _added_or_removed(element: str, kind: str, e: Skill | Tool) -> Change:
    value = e.model_dump(mode="json")
    before, after = (None, value) if kind == "added" else (value, None)
    return semantic_change(kind, element, e.id, f"{element}s[{e.id}]",
                           f"{element} {e.id} {kind}: {e.name}", before, after)
