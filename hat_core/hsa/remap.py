"""Re-map trajectories from the original harness onto a variant (and back).

A trajectory is a list of OpenAI-style messages (see `hat_core.sim.episode`): tool calls
with `function.name` and `function.arguments` (a JSON string), tool messages, text in
`content` and `reasoning_content`. Re-mapping renames called tools and their argument keys
(per tool), rewrites mentions of renamed skills, tools and parameters in assistant text and
reasoning (`RenameMap.terms`), and, when the original harness is given, swaps the rendered
system prompt and the hooks' feedback messages for the variant's. Tool results are left as
they are: the tools return the same data under any surface.

    remapper = Remapper(variant, original)          # precompiles the tables once
    rows = [remapper.messages(t) for t in trajectories]
    back = Remapper(variant, original, reverse=True)

Build one `Remapper` per variant and reuse it: per message the work is dictionary lookups,
one regular-expression pass over text that can mention a name, and a JSON round trip only for
arguments whose keys change.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hat_core.harness.model import Harness
from hat_core.harness.render import render_system_prompt
from hat_core.hsa.mentions import Replacer
from hat_core.hsa.variant import Variant

TEXT_KEYS = ("content", "reasoning_content")
SKILL_KEYS = ("skill", "skill_name")


class Remapper:
    """Precompiled tables that carry trajectories between an original and one variant."""

    def __init__(self, variant: Variant, original: Harness | None = None, *,
                 reverse: bool = False):
        rmap = variant.rename_map.inverse() if reverse else variant.rename_map
        distractors = set(variant.distractors)
        tools = [t for t in variant.harness.tools if t.id not in distractors]
        # Source-side name of each tool: the map's old side, else its unchanged name.
        old_name = {t.id: rmap.tools[t.id][0] if t.id in rmap.tools else t.name for t in tools}
        self.tool_names = {old_name[t.id]: rmap.tools[t.id][1] for t in tools
                           if t.id in rmap.tools}
        self.params = {old_name[i]: dict(m) for i, m in rmap.params.items() if m and i in old_name}
        self.skill_names = {old: new for old, new in rmap.skills.values()}
        self.text = Replacer(rmap.terms)
        self.whole = _whole_texts(variant, original, reverse) if original is not None else {}

    def messages(self, messages: Sequence[dict]) -> list[dict]:
        """The trajectory re-mapped (new message dicts; the input is not changed)."""
        return [self.message(m) for m in messages]

    def message(self, msg: dict) -> dict:
        """One message re-mapped."""
        out = dict(msg)
        role = msg.get("role")
        if role == "tool":
            if "name" in msg:
                out["name"] = self.tool_names.get(msg["name"], msg["name"])
            return out
        for key in TEXT_KEYS:
            value = msg.get(key)
            if isinstance(value, str) and value:
                out[key] = self.whole.get(value) or self.text.sub(value)
        calls = msg.get("tool_calls")
        if calls:
            out["tool_calls"] = [self.call(c) for c in calls]
        for key in SKILL_KEYS:
            if isinstance(msg.get(key), str):
                out[key] = self.skill_name(msg[key])
        return out

    def call(self, call: dict) -> dict:
        """One `{"id", "type", "function": {"name", "arguments"}}` tool call re-mapped."""
        fn = call.get("function") or {}
        name = fn.get("name", "")
        new_fn = dict(fn, name=self.tool_names.get(name, name))
        renames = self.params.get(name)
        if renames and "arguments" in fn:
            new_fn["arguments"] = remap_arguments(fn["arguments"], renames)
        return dict(call, function=new_fn)

    def skill_name(self, name: str) -> str:
        """A skill's name in the target harness (unchanged when it was not renamed)."""
        return self.skill_names.get(name, name)

    def trajectory(self, row: Mapping[str, Any]) -> dict:
        """A row `{"messages": [...], "tools": [...], "metadata": {...}, ...}` re-mapped."""
        out = dict(row)
        if "messages" in row:
            out["messages"] = self.messages(row["messages"])
        if isinstance(row.get("tools"), list):
            out["tools"] = [self._tool_spec(t) for t in row["tools"]]
        if isinstance(row.get("metadata"), Mapping):
            out["metadata"] = {k: self.skill_name(v) if k in SKILL_KEYS and isinstance(v, str)
                               else v for k, v in row["metadata"].items()}
        return out

    def _tool_spec(self, spec: dict) -> dict:
        fn = spec.get("function") or {}
        name = fn.get("name", "")
        renames = self.params.get(name, {})
        params = fn.get("parameters") or {}
        props = {renames.get(k, k): v for k, v in (params.get("properties") or {}).items()}
        new_params = dict(params, properties=props)
        if "required" in params:
            new_params["required"] = [renames.get(r, r) for r in params["required"]]
        new_fn = dict(fn, name=self.tool_names.get(name, name), parameters=new_params)
        if isinstance(fn.get("description"), str):
            new_fn["description"] = self.text.sub(fn["description"])
        return dict(spec, function=new_fn)


def remap_arguments(arguments: Any, renames: Mapping[str, str]) -> Any:
    """Rename the top-level keys of a JSON-string (or dict) argument object.

    Text that is not a JSON object is returned as it was (a malformed call stays malformed);
    a string whose keys need no change is returned unchanged, byte for byte.
    """
    if isinstance(arguments, dict):
        return {renames.get(k, k): v for k, v in arguments.items()}
    if not isinstance(arguments, str):
        return arguments
    try:
        data = json.loads(arguments)
    except ValueError:
        return arguments
    if not isinstance(data, dict) or not any(k in renames for k in data):
        return arguments
    return json.dumps({renames.get(k, k): v for k, v in data.items()}, ensure_ascii=False)


def _whole_texts(variant: Variant, original: Harness, reverse: bool) -> dict[str, str]:
    """Texts replaced whole: the rendered system prompt and each hook's message, by hook id."""
    pairs = [(render_system_prompt(original), render_system_prompt(variant.harness))]
    messages = {h.id: getattr(h.action, "message", "") for h in variant.harness.hooks}
    pairs += [(getattr(h.action, "message", ""), messages.get(h.id, "")) for h in original.hooks]
    table = {a: b for a, b in pairs if a and b and a != b}
    return {b: a for a, b in table.items()} if reverse else table
