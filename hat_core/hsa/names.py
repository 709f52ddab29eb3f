"""Surface names for HSA: split a name into words, draw new words from a pool, join them.

    >>> import random
    >>> from hat_core.hsa.vocab import TRAIN
    >>> words("getProductInfo"), words("GET_PRICE"), words("cha-jia_ge")
    (['get', 'product', 'info'], ['get', 'price'], ['cha', 'jia', 'ge'])
    >>> new_name("get_price", random.Random(0), TRAIN, NameOdds()).isidentifier()
    True

A new name is valid (`hat_core.harness.model.IDENTIFIER`) by construction; uniqueness is the
caller's job (`hat_core.hsa.rename`), which passes the names already taken.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass

from hat_core.harness.model import IDENTIFIER
from hat_core.hsa.vocab import FILLERS, Pool, has_form

_CHUNK = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
MAX_TRIES = 40


@dataclass(frozen=True)
class NameOdds:
    """Per-name probabilities: replace a word, use pinyin, add an affix, go opaque."""

    synonym: float = 0.7
    pinyin: float = 0.25
    affix: float = 0.3
    opaque: float = 0.5
    drop_filler: float = 0.5


def words(name: str) -> list[str]:
    """The lower-case words (or pinyin syllables) of a name in any case style; no digits."""
    return [c.lower() for c in _CHUNK.findall(name) if not c.isdigit()]


def join(parts: list[str], style: str) -> str:
    """Join lower-case parts (which may hold `_`) in one case style."""
    flat = [w for p in parts for w in p.split("_") if w]
    if style == "snake":
        return "_".join(flat)
    if style == "kebab":
        return "-".join(flat)
    if style == "screaming":
        return "_".join(flat).upper()
    caps = [w[:1].upper() + w[1:] for w in flat]
    if style == "camel":
        return flat[0] + "".join(caps[1:])
    if style == "pascal":
        return "".join(caps)
    raise ValueError(f"unknown case style {style!r}")


def new_name(old: str, rng: random.Random, pool: Pool, odds: NameOdds,
             taken: frozenset[str] | set[str] = frozenset(),
             table: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """A fresh valid name for `old` from `pool`, not in `taken` and not equal to `old`."""
    for _ in range(MAX_TRIES):
        candidate = _draw(old, rng, pool, odds, table)
        if candidate != old and candidate not in taken and _fits(candidate, pool):
            return candidate
    for tag in pool.version_tags:  # a crowded neighbourhood: fall back to a tagged name
        for n in range(2, 100):
            candidate = join(_replaced(old, rng, pool, odds, table), pool.case_styles[0])
            candidate = f"{candidate}{tag}{n}"[:64]
            if candidate not in taken and _fits(candidate, pool):
                return candidate
    raise ValueError(f"no free name for {old!r}")


def led_name(old: str, lead: str, rng: random.Random, pool: Pool, odds: NameOdds,
             taken: frozenset[str] | set[str] = frozenset()) -> str:
    """A fresh name for `old` that starts with `lead`: the name `new_name` would draw, with
    its first word replaced by `lead` (or `lead` put before a one-word name).

    Several tools renamed with one lead (`fetch_cost`, `fetch_order`, `fetch_k3vq9xze`) can
    only be told apart by their later words: a namespace or a shared verb, as real harnesses
    do (v2's `query_price` beside `query_order`). Falls back to `new_name` when no led
    candidate is free.
    """
    for _ in range(MAX_TRIES):
        drawn = _draw(old, rng, pool, odds, None)
        parts = words_keep(drawn)
        candidate = join([lead, *(parts[1:] if len(parts) > 1 else parts)], _style_of(drawn))
        if candidate != old and candidate not in taken and _fits(candidate, pool):
            return candidate
    return new_name(old, rng, pool, odds, taken)


def lead_words(names: list[str], pool: Pool) -> list[str]:
    """The words a shared lead may be: the names' own first words, their pool synonyms and
    the pool's prefixes, less the words the pool must avoid; sorted, so a seed decides."""
    firsts = {words(n)[0] for n in names if words(n)}
    found = set(firsts) | {p.strip("_").lower() for p in pool.prefixes}
    for word in firsts:
        found.update(pool.synonyms.get(word, ()))
    return sorted(w for w in found if w.isidentifier() and w not in pool.avoid)


def is_screaming(name: str) -> bool:
    """SCREAMING_CASE: at least two letters, all upper case."""
    letters = [c for c in name if c.isalpha()]
    return len(letters) > 1 and all(c.isupper() for c in letters)


def _fits(name: str, pool: Pool) -> bool:
    """Valid, free of the pool's avoided words and forms, not in a case style the pool lacks,
    and showing the pool's mark (a word or a pinyin form) when it has one."""
    found = words(name)
    if not IDENTIFIER.match(name) or set(found) & pool.avoid or has_form(found,
                                                                         pool.avoid_forms):
        return False
    if "-" in name and "kebab" not in pool.case_styles:
        return False
    if (pool.marks or pool.mark_forms) and not (set(found) & pool.marks
                                                 or has_form(found, pool.mark_forms)):
        return False
    return "screaming" in pool.case_styles or not is_screaming(name)


def _draw(old: str, rng: random.Random, pool: Pool, odds: NameOdds,
          table: Mapping[str, tuple[str, ...]] | None) -> str:
    if pool.name == "train" and rng.random() < odds.opaque:
        return _opaque(rng)
    name = join(_replaced(old, rng, pool, odds, table), rng.choice(pool.case_styles))
    if rng.random() < odds.affix:
        name = _affixed(name, rng, pool)
    return name


def _replaced(old: str, rng: random.Random, pool: Pool, odds: NameOdds,
              table: Mapping[str, tuple[str, ...]] | None) -> list[str]:
    source = words(old) or ["x"]
    kept = [w for w in source if not (w in FILLERS and rng.random() < odds.drop_filler)]
    use_pinyin = table is None and rng.random() < odds.pinyin
    lookup = table if table is not None else pool.pinyin if use_pinyin else pool.synonyms
    out = []
    for w in kept or source:
        options = lookup.get(w)
        if options and (use_pinyin or rng.random() < odds.synonym):
            out.append(rng.choice(options))
        elif not (use_pinyin and w in FILLERS):
            out.append(w)
    return out or source


def _affixed(name: str, rng: random.Random, pool: Pool) -> str:
    """Add a prefix, a suffix or a version tag, in the name's own case style."""
    kind = rng.choice(("prefix", "suffix", "version"))
    style = _style_of(name)
    if kind == "prefix":
        return join([rng.choice(pool.prefixes).strip("_"), *words_keep(name)], style)
    affix = rng.choice(pool.suffixes if kind == "suffix" else pool.version_tags)
    if kind == "version" and not affix.startswith("_"):
        return name + affix
    return join([*words_keep(name), affix.strip("_")], style)


def words_keep(name: str) -> list[str]:
    """Like `words` but keeping digit runs (`fetch_v2` -> fetch, v2)."""
    return [p.lower() for p in re.split(r"[_-]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name))
            if p]


def _style_of(name: str) -> str:
    if "-" in name:
        return "kebab"
    if is_screaming(name):
        return "screaming"
    if "_" in name or name.islower():
        return "snake"
    return "pascal" if name[:1].isupper() else "camel"


def _opaque(rng: random.Random) -> str:
    first = rng.choice(string.ascii_lowercase)
    rest = "".join(rng.choice(string.ascii_lowercase + string.digits)
                   for _ in range(rng.randint(5, 9)))
    return first + rest
