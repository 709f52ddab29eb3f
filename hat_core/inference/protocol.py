"""The inference interface suites run models through, and Qwen3 output parsing.

`InferenceBackend.chat(messages, tools=None, max_tokens=..., temperature=0)` returns an
`AssistantOutput(content, reasoning_content, tool_calls)`. Implementations live in
`backends.py`: `TransformersBackend` (a local model directory) and `OpenAIBackend` (any
OpenAI-compatible endpoint). `parse_qwen3(text)` splits raw Qwen3-template output into those
three parts: a `<think>...</think>` block, `<tool_call>{json}</tool_call>` blocks, the rest.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

_THINK = re.compile(r"^\s*(?:<think>)?(.*?)</think>", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


@dataclass(frozen=True)
class ToolCall:
    """One call the model made; `arguments` is the JSON text as emitted."""

    name: str
    arguments: str

    def to_openai(self, index: int) -> dict:
        return {"id": f"call_{index}", "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class AssistantOutput:
    """One assistant turn: visible content, reasoning and tool calls (malformed ones kept
    in `invalid_tool_calls` as raw text)."""

    content: str
    reasoning_content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    invalid_tool_calls: tuple[str, ...] = field(default=())


@runtime_checkable
class InferenceBackend(Protocol):
    """Anything that answers a chat turn."""

    name: str

    def chat(self, messages: list[dict], tools: list[dict] | None = None, *,
             max_tokens: int = 512, temperature: float = 0.0) -> AssistantOutput: ...


def _tool_call(raw: str) -> ToolCall | None:
    try:
        data = json.loads(raw.strip())
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    args = data.get("arguments", {})
    return ToolCall(data["name"], args if isinstance(args, str)
                    else json.dumps(args, ensure_ascii=False))


def parse_qwen3(text: str) -> AssistantOutput:
    """Split raw Qwen3 output (special tokens already removed) into its three parts."""
    reasoning = ""
    think = _THINK.match(text)
    if think:
        reasoning, text = think.group(1).strip(), text[think.end():]
    calls, invalid = [], []
    for raw in _TOOL_CALL.findall(text):
        call = _tool_call(raw)
        if call:
            calls.append(call)
        else:
            invalid.append(raw.strip())
    content = _TOOL_CALL.sub("", text).strip()
    return AssistantOutput(content, reasoning, tuple(calls), tuple(invalid))
