"""The harness h = (S, T, P, K): skills, tools, the prompt template and lifecycle hooks.

A `Harness` is an immutable pydantic model. Every element has a stable semantic `id` (what
stays the same across weekly edits) and a surface form (`name`, description, wording) that
the model sees. Load and validate documents with `hat_core.harness.io`; render what the model
sees with `hat_core.harness.render`; compare versions with `hat_core.diff.api`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
HOOK_EVENTS = ("before_tool_call", "after_tool_call", "on_tool_error", "before_response")
# Placeholders the renderer fills itself; any other must be a prompt variable.
BUILTIN_PLACEHOLDERS = ("skill_list", "tool_list", "hook_rules")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Tool(_Frozen):
    """A function the model can call: JSON-Schema parameters and what it returns."""

    id: str
    name: str
    description: str
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []}
    )
    returns: str = ""

    @property
    def param_names(self) -> list[str]:
        return list(self.parameters.get("properties", {}))


class Skill(_Frozen):
    """A capability: when to use it, how, and which tools (by tool id) it may call."""

    id: str
    name: str
    description: str
    instructions: str = ""
    tools: tuple[str, ...] = ()
    triggers: tuple[str, ...] = ()


class Section(_Frozen):
    """One named part of the system prompt; `body` may hold `{placeholders}`."""

    id: str
    title: str
    body: str


class PromptStyle(_Frozen):
    """How sections and list items are laid out; HSA varies these."""

    heading: str = "## {title}"
    skill_item: str = "- {name}: {description}（工具：{tools}）"
    tool_item: str = "- {name}: {description}"
    separator: str = "\n\n"


class Prompt(_Frozen):
    """The template that assembles the system prompt, section by section."""

    language: str = "zh"
    sections: tuple[Section, ...]
    variables: dict[str, str] = Field(default_factory=dict)
    style: PromptStyle = PromptStyle()


class ForbiddenWords(_Frozen):
    """Fires when the text contains any of the words."""

    type: Literal["forbidden_words"]
    words: tuple[str, ...]


class ForbiddenPatterns(_Frozen):
    """Fires when the text matches any of the regular expressions."""

    type: Literal["forbidden_patterns"]
    patterns: tuple[str, ...]


class PriceFromTool(_Frozen):
    """Fires when a reply states a price that no tool result of the episode contains."""

    type: Literal["price_from_tool"]


class ArgumentSchema(_Frozen):
    """Fires when a tool call's arguments do not match the tool's JSON Schema."""

    type: Literal["argument_schema"]


class MaxRetries(_Frozen):
    """Fires once a turn has been retried `limit` times."""

    type: Literal["max_retries"]
    limit: int = Field(ge=0, le=20)


Condition = Annotated[
    ForbiddenWords | ForbiddenPatterns | PriceFromTool | ArgumentSchema | MaxRetries,
    Field(discriminator="type"),
]


class BlockRetry(_Frozen):
    """Reject the step and ask the model again with `message`."""

    type: Literal["block_retry"]
    message: str


class Rewrite(_Frozen):
    """Replace what triggered the condition with `replacement`."""

    type: Literal["rewrite"]
    replacement: str = ""


class Handoff(_Frozen):
    """Stop and hand the conversation to a human with `message`."""

    type: Literal["handoff"]
    message: str


Action = Annotated[BlockRetry | Rewrite | Handoff, Field(discriminator="type")]


class Hook(_Frozen):
    """A check at a lifecycle event: a condition and what to do when it holds."""

    id: str
    event: str
    condition: Condition
    action: Action
    description: str = ""


class Harness(_Frozen):
    """One version of an agent's harness."""

    harness: str = Field(description="the harness line this version belongs to")
    description: str = ""
    skills: tuple[Skill, ...]
    tools: tuple[Tool, ...]
    prompt: Prompt
    hooks: tuple[Hook, ...] = ()

    def canonical_json(self) -> str:
        """The canonical serialisation: sorted keys, no whitespace, defaults filled in."""
        return canonical_dumps(self.model_dump(mode="json"))

    def content_hash(self) -> str:
        """sha256 of the canonical form: the same for any formatting or key order."""
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()

    def tool(self, tool_id: str) -> Tool:
        """The tool with this id (KeyError when there is none)."""
        for t in self.tools:
            if t.id == tool_id:
                return t
        raise KeyError(tool_id)

    def tool_by_name(self, name: str) -> Tool | None:
        """The tool the model knows by `name`, or None."""
        return next((t for t in self.tools if t.name == name), None)

    def skill(self, skill_id: str) -> Skill:
        """The skill with this id (KeyError when there is none)."""
        for s in self.skills:
            if s.id == skill_id:
                return s
        raise KeyError(skill_id)


def canonical_dumps(data: Any) -> str:
    """JSON with sorted keys, compact separators and real Unicode."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
