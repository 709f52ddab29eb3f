"""One corpus sample: a chat (messages + optional OpenAI tool schemas) and what it tests.

`render_text(sample)` renders it through TRL's qwen3 chat template exactly as
`tokenizer.apply_chat_template(..., tokenize=False)` would, without needing a tokenizer (the
tokenizer is trained on these renderings). `fold_tools(messages, tools)` is the compact
render profile (`hat_core.harness.render`): the tools become short lines in the system message and
no schemas reach the template.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transformers.utils.chat_template_utils import render_jinja_template

from hat_core.basemodel.tokenizer import qwen3_chat_template
from hat_core.harness.render import COMPACT_STYLES, CompactStyle, compact_tool_line, param_notes

COMPACT_HEADINGS = ("## 工具", "## Tools", "工具：", "Tools:", "[Available tools]", "《工具》")


@dataclass(frozen=True)
class Sample:
    """A chat; `kind` is "tool", "chat" or "instruction"; `target` the tool name expected first
    (tool samples) and `checks` the verifiable instructions (instruction samples)."""

    kind: str
    lang: str
    messages: list[dict]
    tools: list[dict] | None = None
    target: str | None = None
    checks: tuple = field(default_factory=tuple)

    def prompt_messages(self) -> list[dict]:
        """The messages up to and including the first user turn (a probe prompt)."""
        first_user = next(i for i, m in enumerate(self.messages) if m["role"] == "user")
        return self.messages[: first_user + 1]


def fold_tools(messages: list[dict], tools: list[dict] | None,
               style: CompactStyle = CompactStyle()) -> list[dict]:
    """`messages` with `tools` as compact lines (`- description: name(params)`) at the end of
    the system message (one is added if there is none), written in `style` (the compact
    profile's, `hat_core.harness.render.COMPACT_STYLES`). The heading depends on the tool
    names only, so a sample always folds the same way."""
    if not tools:
        return messages
    funcs = [t["function"] for t in tools]
    lines = [compact_tool_line(f["name"], f.get("description", ""),
                               list(f.get("parameters", {}).get("properties", {})),
                               list(f.get("parameters", {}).get("required", [])),
                               param_notes(f.get("parameters", {})) if style.args else None,
                               style.desc_chars)
             for f in funcs]
    heading = COMPACT_HEADINGS[sum(map(ord, funcs[0]["name"])) % len(COMPACT_HEADINGS)]
    block = "\n".join([heading, *lines])
    if messages and messages[0]["role"] == "system":
        return [{**messages[0], "content": f"{messages[0]['content']}\n{block}"}, *messages[1:]]
    return [{"role": "system", "content": block}, *messages]


def render_text(messages: list[dict], tools: list[dict] | None = None,
                add_generation_prompt: bool = False, profile: str = "full") -> str:
    """`messages` (and `tools`) rendered by the qwen3 chat template; with a compact profile
    the tools are folded into the system message (`fold_tools`)."""
    if profile in COMPACT_STYLES:
        messages, tools = fold_tools(messages, tools, COMPACT_STYLES[profile]), None
    rendered, _ = render_jinja_template(
        conversations=[messages], tools=tools, chat_template=qwen3_chat_template(),
        add_generation_prompt=add_generation_prompt,
    )
    return rendered[0]
