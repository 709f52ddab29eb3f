"""What the model sees: the system prompt and the OpenAI-style tool list of a harness.

One renderer serves training, evaluation and serving, so a model is always shown a harness
the same way. Placeholders: `{skill_list}`, `{tool_list}`, `{hook_rules}` and the prompt's
own variables.

Render profiles:
- `full` (the default): every prompt section, and the tools as OpenAI schemas that the chat
  template writes into `<tools>` (about 4-5k tokens for `examples/harnesses/v1.yaml`);
- `compact`: for models with a short context (the `toy` base). The system prompt is one short
  line per tool, description first (`- 查询商品的原价: get_price(product_id)`), then one line
  per skill; no tool schemas go to the chat template (`Rendered.tools == []`). Headings,
  section order, names, descriptions and order still follow the harness, so HSA variants
  render differently. About 15x shorter than `full` on v1.
- `compact-args`: `compact` with each parameter's short description after its name
  (`- 查询商品某个规格的库存: check_stock(product_id 商品编号, sku? 规格)`), so a renamed
  parameter still says what it holds; `full` says it in the schemas, plain `compact` only
  through the name and the order.
- `compact-args-long`: `compact-args` with descriptions cut at 24 characters instead of 12,
  so most tool descriptions are shown whole.

The profile is chosen per call (`render(h, profile=...)`) or process-wide
(`use_profile("compact")`, a context manager; `active_profile()`), which is how the
simulator binding, the data build, training rows and the evaluation suites all pick it up.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hat_core.errors import ConfigError, Problem
from hat_core.harness.model import PLACEHOLDER, Harness, Hook

COMPACT_ARG_CHARS = 6
COMPACT_DESC_CHARS = 12


@dataclass(frozen=True)
class CompactStyle:
    """How a compact profile writes a tool line: with parameter notes or not, and where a
    description is cut (characters of Chinese)."""

    args: bool = False
    desc_chars: int = COMPACT_DESC_CHARS


# the profiles that fold the tools into the system prompt as lines (no schemas)
COMPACT_STYLES = {"compact": CompactStyle(),
                  "compact-args": CompactStyle(args=True),
                  "compact-args-long": CompactStyle(args=True, desc_chars=24)}
PROFILES = ("full", *COMPACT_STYLES)
COMPACT_DESC_WORDS = 4
_CJK = re.compile(r"[\u3400-\u9fff]")
_DESC_CUT = re.compile(r"[（(，,。；;]")
_DESC_PREFIX = re.compile(r"^[^:：=（(]{1,10}?(?:=>|:|：)\s*(?=\S)")
_profile = {"name": "full"}


@dataclass(frozen=True)
class Rendered:
    """The system prompt and the tools list (OpenAI `tools=` format) of one harness."""

    system_prompt: str
    tools: list[dict]


def render(harness: Harness, profile: str | None = None) -> Rendered:
    """Render the system prompt and the tool list the model is given (`profile`: see module
    doc; None = the active profile)."""
    name = check_profile(profile or active_profile())
    if name in COMPACT_STYLES:
        return Rendered(system_prompt=render_compact_prompt(harness, COMPACT_STYLES[name]),
                        tools=[])
    return Rendered(system_prompt=render_system_prompt(harness), tools=render_tools(harness))


def check_profile(name: str) -> str:
    """`name` if it is a known profile; `ConfigError` listing the valid ones otherwise."""
    if name not in PROFILES:
        raise ConfigError(f"unknown render profile {name!r}",
                          [Problem("render_profile", f"valid profiles: {', '.join(PROFILES)}")])
    return name


def active_profile() -> str:
    """The process-wide render profile (`full` unless `use_profile` changed it)."""
    return _profile["name"]


@contextmanager
def use_profile(name: str | None) -> Iterator[str]:
    """Render with profile `name` inside the block (None keeps the current one)."""
    previous = _profile["name"]
    _profile["name"] = check_profile(name or previous)
    try:
        yield _profile["name"]
    finally:
        _profile["name"] = previous


def short_description(text: str, limit: int = COMPACT_DESC_CHARS) -> str:
    """The description's first clause, at most `limit` characters of Chinese or
    `COMPACT_DESC_WORDS` words of other text (compact profile). A short lead-in
    (`Purpose: `, `作用 => `) is dropped so the limit keeps the content words."""
    body = _DESC_PREFIX.sub("", text.strip(), count=1)
    head = _DESC_CUT.split(body, maxsplit=1)[0].strip() or body
    if _CJK.search(head):
        return head[:limit]
    return " ".join(head.split()[:COMPACT_DESC_WORDS])


def listed_line(description: str, name: str, profile: str | None = None) -> str:
    """`description: name` as a tool or skill line of `profile` (None: the active one) shows
    them, without the `- ` and the parameters; the full profile cuts the description as
    `compact` does."""
    style = COMPACT_STYLES.get(profile or active_profile(), CompactStyle())
    return _line_head(description, name, style.desc_chars)


def _line_head(description: str, name: str, desc_chars: int) -> str:
    """`description: name`, the start of every compact tool and skill line."""
    return f"{short_description(description, desc_chars)}: {name}"


def is_compact(profile: str) -> bool:
    """Whether `profile` folds the tools into the system prompt (no tool schemas)."""
    return profile in COMPACT_STYLES


def compact_tool_line(name: str, description: str, params: list[str],
                      required: list[str], notes: dict[str, str] | None = None,
                      desc_chars: int = COMPACT_DESC_CHARS) -> str:
    """`- description: name(a, b?)`: description first, so a causal model reading the name
    has already seen what the tool does; optional parameters end in `?`. With `notes`
    (parameter -> description, the `compact-args` profiles) each parameter is followed by its
    description's first clause: `name(a 说明, b? 说明)`."""
    def arg(p: str) -> str:
        text = p if p in required else f"{p}?"
        note = short_description(notes.get(p, ""), COMPACT_ARG_CHARS) if notes else ""
        return f"{text} {note}" if note else text

    args = ", ".join(arg(p) for p in params)
    return f"- {_line_head(description, name, desc_chars)}({args})"


def param_notes(parameters: dict) -> dict[str, str]:
    """Parameter name -> description of a JSON-schema `parameters` object."""
    props = parameters.get("properties") or {}
    return {k: str(v.get("description", "")) for k, v in props.items() if isinstance(v, dict)}


def render_compact_prompt(harness: Harness, lines: CompactStyle = CompactStyle()) -> str:
    """The compact system prompt: tool lines and skill lines under the harness's headings,
    in the harness's section order (see module doc), the lines written in `lines`' style."""
    blocks = {"tools": _compact_tools(harness, lines),
              "skills": _compact_skills(harness, lines.desc_chars)}
    titles = {"tools": "工具", "skills": "技能"}
    placeholders = {"tools": "{tool_list}", "skills": "{skill_list}"}
    style = harness.prompt.style
    parts = []
    for section in harness.prompt.sections:
        for key, placeholder in placeholders.items():
            if placeholder in section.body and blocks.get(key) is not None:
                title = section.title or titles[key]
                parts.append(f"{style.heading.replace('{title}', title)}\n{blocks.pop(key)}")
    parts += [f"{style.heading.replace('{title}', titles[k])}\n{v}" for k, v in blocks.items()]
    return "\n".join(parts)


def _compact_tools(harness: Harness, style: CompactStyle) -> str:
    return "\n".join(
        compact_tool_line(t.name, t.description, t.param_names,
                          list(t.parameters.get("required", [])),
                          param_notes(t.parameters) if style.args else None, style.desc_chars)
        for t in harness.tools
    )


def _compact_skills(harness: Harness, desc_chars: int = COMPACT_DESC_CHARS) -> str:
    return "\n".join(f"- {_line_head(s.description, s.name, desc_chars)}"
                     for s in harness.skills)


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
