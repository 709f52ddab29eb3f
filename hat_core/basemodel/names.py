"""Random identifiers for tools and parameters: mixed case styles, word pools, random letters.

The base model must learn to copy names from the prompt, so names are drawn fresh for every
sample. `TRAIN_VERBS` feed the corpus; `HELDOUT_VERBS` only the probe, so probe names are unseen.
"""

from __future__ import annotations

import random
import string

TRAIN_VERBS = ("get", "fetch", "find", "lookup", "query", "search", "load", "read", "show",
               "list", "make", "create", "add", "set", "run", "do", "compute", "calc", "check",
               "open", "view", "call", "use", "start", "ask", "pick", "scan", "see", "grab")
HELDOUT_VERBS = ("obtain", "pull", "resolve", "request", "retrieve", "locate", "consult", "probe")
SUFFIXES = ("v2", "api", "tool", "fn", "now", "info", "svc", "x", "2", "data")
PREFIXES = ("app", "my", "sys", "ext", "svc", "the", "do", "hub")

STYLES = ("snake", "camel", "pascal", "kebab", "flat")


def join_words(words: list[str], style: str) -> str:
    """Join lower-case `words` in one case style (snake, camel, pascal, kebab, flat)."""
    if style == "snake":
        return "_".join(words)
    if style == "kebab":
        return "-".join(words)
    if style == "flat":
        return "".join(words)
    caps = [w[:1].upper() + w[1:] for w in words]
    if style == "camel":
        return words[0] + "".join(caps[1:])
    return "".join(caps)


def random_letters(rng: random.Random, lo: int = 5, hi: int = 9) -> str:
    """An opaque identifier such as `ykqvgjt` or `bQwerTz`."""
    word = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(lo, hi)))
    if rng.random() < 0.3:
        word = "".join(c.upper() if rng.random() < 0.3 else c for c in word)
    return word


def tool_name(rng: random.Random, nouns: tuple[str, ...], verbs: tuple[str, ...] = TRAIN_VERBS,
              opaque: float = 0.25) -> str:
    """A tool name from a verb and one of `nouns`, or (with probability `opaque`) random letters."""
    if rng.random() < opaque:
        return random_letters(rng)
    words = rng.choice(nouns).split()
    if rng.random() < 0.8:
        words = [rng.choice(verbs)] + words
    if rng.random() < 0.15:
        words = [rng.choice(PREFIXES)] + words
    if rng.random() < 0.2:
        words = words + [rng.choice(SUFFIXES)]
    return join_words(words, rng.choice(STYLES[:4]))


def param_name(rng: random.Random, synonyms: tuple[str, ...], opaque: float = 0.2) -> str:
    """A parameter name from `synonyms` in a random case style, or random letters."""
    if rng.random() < opaque:
        return random_letters(rng, 3, 7)
    return join_words(rng.choice(synonyms).split(), rng.choice(("snake", "camel", "flat")))
