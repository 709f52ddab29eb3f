"""Verifiable instructions (IFEval-style) and their checkers.

A `Check` is one instruction ("exactly 3 sentences", "all lowercase", "end with X" ...);
`passes(check, response)` says whether a response follows it. The corpus generator writes
responses that pass every check of their prompt; the probe scores model outputs with the same
functions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

SENTENCE_END = re.compile(r"[.!?。！？]")
HAN = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Check:
    """One instruction: `kind` names the checker, `arg` its parameter (a count, a phrase ...)."""

    kind: str
    arg: object = None


def _strip_fences(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = re.sub(r"^```[a-zA-Z]*\n?", "", text)
        text = re.sub(r"\n?```$", "", text)
    return text.strip()


def _is_json(text: str) -> bool:
    try:
        json.loads(_strip_fences(text))
    except ValueError:
        return False
    return True


def count_sentences(text: str) -> int:
    return len(SENTENCE_END.findall(text))


def count_words(text: str) -> int:
    """Whitespace words, with every Han character counted as one word."""
    return len(HAN.findall(text)) + len(HAN.sub(" ", text).split()) if HAN.search(text) \
        else len(text.split())


CHECKERS = {
    "sentences": lambda t, n: count_sentences(t) == n,
    "max_words": lambda t, n: 0 < count_words(t) <= n,
    "bullets": lambda t, n: sum(1 for ln in t.splitlines() if ln.startswith("* ")) == n,
    "paragraphs": lambda t, n: len([p for p in t.split("***") if p.strip()]) == n
    and t.count("***") == n - 1,
    "keywords": lambda t, ws: all(w in t for w in ws),
    "lowercase": lambda t, _: t == t.lower() and t != t.upper(),
    "uppercase": lambda t, _: t == t.upper() and t != t.lower(),
    "no_commas": lambda t, _: "," not in t and "，" not in t,
    "title": lambda t, _: re.search(r"<<[^\n<>]+>>", t) is not None,
    "end_phrase": lambda t, p: t.strip().endswith(p),
    "quotes": lambda t, _: len(t.strip()) > 1 and t.strip()[0] == '"' and t.strip()[-1] == '"',
    "json": lambda t, _: _is_json(t),
}


def passes(check: Check, response: str) -> bool:
    """Whether `response` follows `check`."""
    return bool(CHECKERS[check.kind](response, check.arg))


def strip_reasoning(text: str) -> str:
    """The reply without a leading `<think>...</think>` block."""
    return text.split("</think>", 1)[1].strip() if "</think>" in text else text.strip()
