"""One corpus sample: a chat (messages + optional OpenAI tool schemas) and what it tests.

`render_text(sample)` renders it through TRL's qwen3 chat template exactly as
`tokenizer.apply_chat_template(..., tokenize=False)` would, without needing a tokenizer (the
tokenizer is trained on these renderings).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transformers.utils.chat_template_utils import render_jinja_template

from hat_core.basemodel.tokenizer import qwen3_chat_template


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


def render_text(messages: list[dict], tools: list[dict] | None = None,
                add_generation_prompt: bool = False) -> str:
    """`messages` (and `tools`) rendered by the qwen3 chat template."""
    rendered, _ = render_jinja_template(
        conversations=[messages], tools=tools, chat_template=qwen3_chat_template(),
        add_generation_prompt=add_generation_prompt,
    )
    return rendered[0]
