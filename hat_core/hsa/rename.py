"""Rename skills, tools and parameters, and rewrite every mention of the old names.

`plan_renames` draws a `RenameMap` from a pool; `apply_renames` applies any map (also its
inverse), so `apply_renames(apply_renames(h, m), m.inverse()) == h` when `h` mentions none of
the new names (which `plan_renames` guarantees by avoiding every token of the harness).

Ids never change. Skill -> tool references are by id and need nothing. A parameter rename
updates the tool's `required` list. Mentions of renamed names in free text (descriptions,
instructions, triggers, returns, parameter descriptions, section titles and bodies, hook
descriptions and messages) are rewritten through `RenameMap.terms`, so the rendered prompt
never shows an old name. A parameter name mentioned in free text gets one new name in every
tool that has it (a text mention must have one meaning); other parameters may be renamed per
tool. Prompt variables and hook conditions are never touched (they are semantic).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from hat_core.harness.model import Harness
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.mentions import Replacer, tokens
from hat_core.hsa.names import lead_words, led_name, new_name
from hat_core.hsa.variant import RenameMap
from hat_core.hsa.vocab import Pool

KINDS = ("tools", "skills", "params")


def rename(harness: Harness, rng: random.Random, pool: Pool, config: HsaConfig,
           kinds: tuple[str, ...] = KINDS) -> tuple[Harness, RenameMap]:
    """Draw renames of the given kinds and apply them."""
    rmap = plan_renames(harness, rng, pool, config, kinds)
    return apply_renames(harness, rmap), rmap


def plan_renames(harness: Harness, rng: random.Random, pool: Pool, config: HsaConfig,
                 kinds: tuple[str, ...] = KINDS) -> RenameMap:
    """A bijective rename map whose new names are fresh (no existing name or text token)."""
    text_tokens = set().union(*(tokens(t) for t in free_texts(harness)))
    taken = text_tokens | all_names(harness) | _fixed_tokens(harness)
    planner = _Planner(rng, pool, config, taken)
    tool_items = [(t.id, t.name) for t in harness.tools]
    lead = None
    # drawn only when asked for, so configs without it keep their variants exactly
    if "tools" in kinds and config.p("shared_lead") > 0 and rng.random() < config.p("shared_lead"):
        lead = rng.choice(lead_words([name for _, name in tool_items], pool))
    tools = planner.elements(tool_items, "tools" in kinds, lead)
    skills = planner.elements([(s.id, s.name) for s in harness.skills], "skills" in kinds)
    params = planner.params(harness, text_tokens) if "params" in kinds else {}
    return RenameMap(tools=tools, skills=skills, params=params, terms=dict(planner.terms))


class _Planner:
    """Draws fresh names, keeping `terms` (text mentions) a bijection."""

    def __init__(self, rng: random.Random, pool: Pool, config: HsaConfig, taken: set[str]):
        self.rng, self.pool, self.odds = rng, pool, config.odds()
        self.p = config.p("rename_element")
        self.taken = taken
        self.terms: dict[str, str] = {}

    def fresh(self, old: str, lead: str | None = None) -> str:
        new = (led_name(old, lead, self.rng, self.pool, self.odds, self.taken) if lead
               else new_name(old, self.rng, self.pool, self.odds, self.taken))
        self.taken.add(new)
        return new

    def term(self, old: str, lead: str | None = None) -> str:
        if old not in self.terms:
            self.terms[old] = self.fresh(old, lead)
        return self.terms[old]

    def elements(self, items: list[tuple[str, str]], enabled: bool,
                 lead: str | None = None) -> dict:
        """Rename each element with chance `p` (always when already a term); with `lead`,
        every new name starts with it."""
        out = {}
        for element_id, name in items:
            if name in self.terms or (enabled and self.rng.random() < self.p):
                out[element_id] = (name, self.term(name, lead))
        return out

    def params(self, harness: Harness, text_tokens: set[str]) -> dict[str, dict[str, str]]:
        names = list(dict.fromkeys(n for t in harness.tools for n in t.param_names))
        mentioned = [n for n in names if n in text_tokens or n in self.terms]
        for name in mentioned:
            if name not in self.terms and self.rng.random() < self.p:
                self.term(name)
        out = {}
        for tool in harness.tools:
            renames = {}
            for name in tool.param_names:
                if name in mentioned:
                    if name in self.terms:
                        renames[name] = self.terms[name]
                elif self.rng.random() < self.p:
                    renames[name] = self.fresh(name)
            if renames:
                out[tool.id] = renames
        return out


def apply_renames(harness: Harness, rmap: RenameMap) -> Harness:
    """The harness with the map's names and every text mention rewritten."""
    data = harness.model_dump(mode="json")
    rep = Replacer(rmap.terms)
    data["description"] = rep.sub(data["description"])
    for skill in data["skills"]:
        skill["name"] = _new(rmap.skills, skill)
        for key in ("description", "instructions"):
            skill[key] = rep.sub(skill[key])
        skill["triggers"] = [rep.sub(t) for t in skill["triggers"]]
    for tool in data["tools"]:
        tool["name"] = _new(rmap.tools, tool)
        tool["description"] = rep.sub(tool["description"])
        tool["returns"] = rep.sub(tool["returns"])
        tool["parameters"] = _renamed_params(tool["parameters"], rmap.params.get(tool["id"], {}),
                                             rep)
    for section in data["prompt"]["sections"]:
        section["title"], section["body"] = rep.sub(section["title"]), rep.sub(section["body"])
    for hook in data["hooks"]:
        hook["description"] = rep.sub(hook["description"])
        for key in ("message", "replacement"):
            if key in hook["action"]:
                hook["action"][key] = rep.sub(hook["action"][key])
    return Harness.model_validate(data)


def _new(table: dict, element: dict) -> str:
    pair = table.get(element["id"])
    if pair is None:
        return element["name"]
    if pair[0] != element["name"]:
        raise ValueError(f"rename map expects {element['id']} to be called {pair[0]!r}, "
                         f"not {element['name']!r}")
    return pair[1]


def _renamed_params(schema: dict, renames: dict[str, str], rep: Replacer) -> dict:
    props = schema.get("properties", {})
    missing = [old for old in renames if old not in props]
    if missing:
        raise ValueError(f"rename map names unknown parameters {missing}")
    out = dict(schema)
    out["properties"] = {renames.get(k, k): _reworded_schema(v, rep) for k, v in props.items()}
    if "required" in schema:
        out["required"] = [renames.get(r, r) for r in schema["required"]]
    return out


def _reworded_schema(value: Any, rep: Replacer) -> Any:
    """A parameter schema with mentions in its description/title wording rewritten."""
    if isinstance(value, list):
        return [_reworded_schema(v, rep) for v in value]
    if not isinstance(value, dict):
        return value
    return {k: rep.sub(v) if k in ("description", "title") and isinstance(v, str)
            else _reworded_schema(v, rep) for k, v in value.items()}


def free_texts(harness: Harness) -> Iterator[str]:
    """Every text HSA may reword or rewrite mentions in."""
    yield harness.description
    for s in harness.skills:
        yield from (s.description, s.instructions, *s.triggers)
    for t in harness.tools:
        yield from (t.description, t.returns)
        yield from _schema_texts(t.parameters)
    for section in harness.prompt.sections:
        yield from (section.title, section.body)
    for h in harness.hooks:
        yield h.description
        yield getattr(h.action, "message", "") or getattr(h.action, "replacement", "")


def _schema_texts(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("description", "title") and isinstance(v, str):
                yield v
            else:
                yield from _schema_texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from _schema_texts(v)


def all_names(harness: Harness) -> set[str]:
    """Every skill, tool and parameter name of the harness."""
    names = {s.name for s in harness.skills} | {t.name for t in harness.tools}
    return names | {p for t in harness.tools for p in t.param_names}


def _fixed_tokens(harness: Harness) -> set[str]:
    """Tokens of what HSA never rewrites (variables, hook conditions): new names avoid them."""
    texts = list(harness.prompt.variables) + list(harness.prompt.variables.values())
    for h in harness.hooks:
        texts += [str(v) for v in h.condition.model_dump().values()]
    return set().union(*(tokens(t) for t in texts)) if texts else set()
