"""Tool-call constrained decoding: inside a `<tool_call>`, the function name can only be one of
the offered tools, and each argument key only a parameter of the tool named.

    constraint = ToolCallConstraint(tokenizer, tools, prompt_len=ids.shape[1],
                                    vocab_size=model.config.vocab_size)
    model.generate(**ids, prefix_allowed_tokens_fn=constraint)   # transformers' own hook

This is what a serving stack's structured outputs do for tool calls (vLLM's structural tags,
grammar-constrained decoding): the text outside a call, the reasoning and the argument
values stay free; only the spans that must name something the harness offers are held to
those names. A small model that reads a renamed harness but spells a name badly (`query_order`
for `query_price`, `weight_cm` for `weight`) can then only choose among the offered names,
by its own likelihood. It cannot make a model that never calls a tool call one, nor pick the
right tool for it.

How it works: transformers' `prefix_allowed_tokens_fn` hook (`PrefixConstrainedLogitsProcessor`)
asks, before every token, which tokens may come next. The text generated so far (the prompt
excluded) is scanned: when it ends inside the name string of the open call (`<tool_call>`
then `{"name": "` and a partial name) or inside a key string at the top level of its
`"arguments"` object, the answer is the tokens whose text continues some allowed name (or
closes it with `"`); anywhere else, every token. Tokens are matched by their decoded text, so
any tokenizer works; a token that would run past the closing quote is not allowed (the quote
then comes as its own token or the start of one).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

OPEN, CLOSE = "<tool_call>", "</tool_call>"
_NAME_START = re.compile(r'^\s*\{\s*"name"\s*:\s*"')
_ARGS_START = re.compile(r'"arguments"\s*:\s*\{')
_NAME_VALUE = re.compile(r'^\s*\{\s*"name"\s*:\s*"([^"\\]*)"')


def offered(tools: Sequence[Mapping]) -> dict[str, tuple[str, ...]]:
    """`{tool name: its parameter names}` of OpenAI-style tool specs (`{"type": "function",
    "function": {"name", "parameters": {"properties"}}}`, or the function object itself)."""
    out: dict[str, tuple[str, ...]] = {}
    for spec in tools:
        fn = spec.get("function", spec)
        name = fn.get("name")
        if isinstance(name, str) and name:
            props = (fn.get("parameters") or {}).get("properties") or {}
            out[name] = tuple(str(k) for k in props)
    return out


@lru_cache(maxsize=8)
def _vocab(tokenizer) -> tuple[tuple[str, ...], dict[str, tuple[int, ...]]]:
    """Each token id's text, and the ids of each text (several ids may decode the same)."""
    texts = tuple(tokenizer.decode([i]) for i in range(len(tokenizer)))
    by_text: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        if t:
            by_text.setdefault(t, []).append(i)
    return texts, {t: tuple(ids) for t, ids in by_text.items()}


def open_span(text: str, tools: Mapping[str, Sequence[str]]) -> tuple[str, list[str]] | None:
    """`(partial, allowed)` when `text` ends inside a name or an argument key of an open tool
    call: what has been written of it, and the strings it may become; None elsewhere."""
    start = text.rfind(OPEN)
    if start < 0 or CLOSE in text[start:]:
        return None
    body = text[start + len(OPEN):]
    head = _NAME_START.match(body)
    if head:
        rest = body[head.end():]
        if '"' not in rest and "\\" not in rest:
            return rest, list(tools)
    named = _NAME_VALUE.match(body)
    args = _ARGS_START.search(body)
    if not named or not args or named.group(1) not in tools:
        return None
    key = _open_key(body[args.end():])
    return None if key is None else (key, list(tools[named.group(1)]))


def _open_key(args: str) -> str | None:
    """The partial key when `args` (the text after the arguments' `{`) ends inside a key
    string of that object; None inside a value, a nested object, or after it closed."""
    depth, in_string, escaped, is_key, expect_key, buf = 0, False, False, False, True, []
    for ch in args:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                expect_key = False
                continue
            if is_key:
                buf.append(ch)
            continue
        if ch == '"':
            in_string, is_key, buf = True, depth == 0 and expect_key, []
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            expect_key = True
        elif ch == ":" and depth == 0:
            expect_key = False
    return "".join(buf) if in_string and is_key and not escaped else None


def allowed_ids(partial: str, allowed: Sequence[str],
                by_text: Mapping[str, Sequence[int]]) -> set[int]:
    """Ids of the tokens that continue `partial` towards one of `allowed` (its closing quote
    included)."""
    out: set[int] = set()
    for target in allowed:
        if not target.startswith(partial):
            continue
        rest = target[len(partial):] + '"'
        for j in range(1, len(rest) + 1):
            out.update(by_text.get(rest[:j], ()))
    return out


class ToolCallConstraint:
    """A `prefix_allowed_tokens_fn` for `model.generate` that holds tool-call names and
    argument keys to the offered tools (see the module doc). `vocab_size`: the model's
    (its logits' width; every id is allowed outside a name or key)."""

    def __init__(self, tokenizer, tools: Sequence[Mapping], prompt_len: int,
                 vocab_size: int | None = None):
        self.tools = offered(tools)
        self.prompt_len = prompt_len
        self.texts, self.by_text = _vocab(tokenizer)
        self.everything = list(range(vocab_size or len(self.texts)))
        self.steps_constrained = 0

    def __call__(self, batch_id: int, input_ids) -> list[int]:
        if not self.tools:
            return self.everything
        text = "".join(self.texts[i] for i in input_ids[self.prompt_len:].tolist()
                       if i < len(self.texts))
        span = open_span(text, self.tools)
        keep = allowed_ids(span[0], span[1], self.by_text) if span else None
        if not keep:  # outside a name or key, or nothing continues one: leave the model be
            return self.everything
        self.steps_constrained += 1
        return sorted(keep)
