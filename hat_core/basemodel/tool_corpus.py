"""Generic tool-use conversations with freshly drawn tool and parameter names.

`tool_sample(rng)` draws 1-5 tools from `tool_domains.TOOLS` in random order, names them at
random (`names.py`), asks a question in English or Chinese that one of them answers, and writes
the assistant's `<think>` reasoning, tool call, the tool result and the final reply. The names
change every sample, so the only way to predict a call is to copy it from the prompt.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from hat_core.basemodel import names
from hat_core.basemodel.sample import Sample
from hat_core.basemodel.tool_domains import TOOLS, ToolSpec

SYSTEM = (
    (
        "You are a helpful assistant.",
        "You are a concise assistant with tools.",
        "Answer the user. Use a tool when it helps.",
    ),
    (
        "你是一个乐于助人的助手。",
        "你是一个简洁的助手，可以使用工具。",
        "回答用户的问题，需要时调用工具。",
    ),
)
GREETINGS = (
    (
        ("Hi!", "Hello! Hi there, how can I help?"),
        ("Thanks, that's all.", "You're welcome!"),
        ("Who are you?", "I am an assistant that can use tools for you."),
    ),
    (
        ("你好！", "你好！有什么可以帮你？"),
        ("谢谢，没别的了。", "不客气！"),
        ("你是谁？", "我是一个可以调用工具的助手。"),
    ),
)


class RenderedTool:
    """One spec under a drawn surface: its name, parameter names and OpenAI schema."""

    def __init__(self, rng: random.Random, spec: ToolSpec, verbs: tuple[str, ...], taken: set,
                 opaque: float = 0.25):
        self.spec = spec
        self.name = _unique(lambda: names.tool_name(rng, spec.nouns, verbs, opaque), taken)
        used: set = set()
        self.params = {
            p.key: _unique(lambda p=p: names.param_name(rng, p.synonyms), used) for p in spec.params
        }
        props = {
            self.params[p.key]: {"type": p.type, "description": rng.choice(p.descs)}
            for p in spec.params
        }
        self.schema = {
            "type": "function",
            "function": {
                "name": self.name,
                "description": rng.choice(spec.descs),
                "parameters": {"type": "object", "properties": props, "required": list(props)},
            },
        }


def _unique(draw, taken: set) -> str:
    name = draw()
    while name in taken:
        name = draw()
    taken.add(name)
    return name


def _think(tool: RenderedTool, args: dict, lang: str) -> str:
    # Names are quoted and arguments written as JSON so that they tokenize exactly as in the
    # tool schema and the call: copying identical token runs is what a small model can learn.
    call = json.dumps(args, ensure_ascii=False)
    if lang == "en":
        intent = tool.spec.intent[0]
        return f'The user wants {intent}. "{tool.name}" fits, so I call it with {call}.'
    return f'用户想{tool.spec.intent[1]}。"{tool.name}"可以做到，调用它：{call}。'


def _round(rng: random.Random, tool: RenderedTool, lang: str) -> list[dict]:
    """A user question, the call, the tool result and the final reply."""
    values = tool.spec.sample(rng, lang)
    question = rng.choice(tool.spec.ask[0 if lang == "en" else 1]).format(**values)
    args = {tool.params[k]: v for k, v in values.items()}
    result = tool.spec.result(rng, values, lang)
    call = {"type": "function", "function": {"name": tool.name, "arguments": args}}
    done = (
        f'I have the result from "{tool.name}"; now I answer.'
        if lang == "en"
        else f'已经拿到"{tool.name}"的结果，现在回答。'
    )
    reply = tool.spec.reply[0 if lang == "en" else 1].format(**values, **result)
    return [
        {"role": "user", "content": question},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": _think(tool, args, lang),
            "tool_calls": [call],
        },
        {"role": "tool", "content": json.dumps(result, ensure_ascii=False)},
        {"role": "assistant", "content": reply, "reasoning_content": done},
    ]


@dataclass(frozen=True)
class ToolMix:
    """How many tools a sample offers and how often a name is random letters. The default is
    the `tiny` corpus; the `toy` sizes use the HSA pre-phase mix (2-8 tools, 50% opaque)."""

    min_tools: int = 1
    max_tools: int = 5
    opaque: float = 0.25


def draw_tools(
    rng: random.Random, verbs: tuple[str, ...] = names.TRAIN_VERBS, max_tools: int = 5,
    mix: ToolMix | None = None,
) -> list[RenderedTool]:
    """`mix.min_tools`-`mix.max_tools` (default 1-`max_tools`) distinct tools under fresh
    names, in random order."""
    mix = mix or ToolMix(max_tools=max_tools)
    count = rng.randint(mix.min_tools, min(mix.max_tools, len(TOOLS)))
    specs = rng.sample(TOOLS, count)
    taken: set = set()
    return [RenderedTool(rng, spec, verbs, taken, mix.opaque) for spec in specs]


def _system(rng: random.Random, lang: str) -> list[dict]:
    if rng.random() < 0.4:
        return [{"role": "system", "content": rng.choice(SYSTEM[0 if lang == "en" else 1])}]
    return []


def tool_sample(rng: random.Random, verbs: tuple[str, ...] = names.TRAIN_VERBS,
                mix: ToolMix | None = None) -> Sample:
    """A conversation with one (sometimes two) tool-call rounds."""
    lang = rng.choice(("en", "zh"))
    tools = draw_tools(rng, verbs, mix=mix)
    first = rng.choice(tools)
    messages = _system(rng, lang) + _round(rng, first, lang)
    if len(tools) > 1 and rng.random() < 0.2:
        messages += _round(rng, rng.choice([t for t in tools if t is not first]), lang)
    return Sample("tool", lang, messages, [t.schema for t in tools], target=first.name)


def chat_sample(rng: random.Random, mix: ToolMix | None = None) -> Sample:
    """Tools are offered but the user only chats: the reply uses no tool."""
    lang = rng.choice(("en", "zh"))
    user, reply = rng.choice(GREETINGS[0 if lang == "en" else 1])
    think = "No tool is needed here." if lang == "en" else "这里不需要调用工具。"
    messages = _system(rng, lang) + [
        {"role": "user", "content": user},
        {"role": "assistant", "content": reply, "reasoning_content": think},
    ]
    return Sample("chat", lang, messages, [t.schema for t in draw_tools(rng, mix=mix)])
