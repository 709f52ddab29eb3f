"""What the model sees: the system prompt and the OpenAI-style tool list of a harness.

One renderer serves training, evaluation and serving, so a model is always shown a harness
the same way. Placeholders: `{skill_list}`, `{tool_list}`, `{hook_rules}` and the prompt's
own variables.
"""

from __future__ import annotations

from dataclasses import dataclass

from hat_core.harness import PLACEHOLDER, Harness, Hook


@dataclass(frozen=True)
class Rendered:
    """The system prompt and the tools list (OpenAI `tools=` format) of one harness."""

    system_prompt: str
    tools: list[dict]


def render(harness: Harness) -> Rendered:
    """Render the system prompt and the tool list the model is given."""
    return Rendered(system_prompt=render_system_prompt(harness), tools=render_tools(harness))


def render_tools(harness: Harness) -> list[dict]:
    """The OpenAI-style tool list, in the harness's tool order."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description + (f" 返回：{t.returns}" if t.returns else ""),
                "parameters": t.parameters,
            },
        }
        for t in harness.tools
    ]


def render_system_prompt(harness: Harness) -> str:
    """Assemble the prompt's sections in order, filling every placeholder."""
    style = harness.prompt.style
    values = dict(harness.prompt.variables)
    values.update(
        skill_list=_skill_list(harness),
        tool_list=_tool_list(harness),
        hook_rules=_hook_rules(harness.hooks),
    )
    parts = []
    for section in harness.prompt.sections:
        body = PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), section.body)
        heading = style.heading.replace("{title}", section.title) if section.title else ""
        parts.append(f"{heading}\n{body.strip()}" if heading else body.strip())
    return style.separator.join(parts)


def _skill_list(harness: Harness) -> str:
    style = harness.prompt.style
    lines = []
    for skill in harness.skills:
        tool_names = "、".join(harness.tool(t).name for t in skill.tools) or "无"
        line = (style.skill_item.replace("{name}", skill.name)
                .replace("{description}", skill.description).replace("{tools}", tool_names))
        if skill.instructions:
            line += "\n  " + skill.instructions.strip().replace("\n", "\n  ")
        lines.append(line)
    return "\n".join(lines)


def _tool_list(harness: Harness) -> str:
    style = harness.prompt.style
    return "\n".join(
        style.tool_item.replace("{name}", t.name).replace("{description}", t.description)
        for t in harness.tools
    )


def _hook_rules(hooks: tuple[Hook, ...]) -> str:
    return "\n".join(f"- {h.description}" for h in hooks if h.description)
