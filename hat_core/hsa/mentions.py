"""Mentions of surface names inside free text, found and replaced as whole identifiers.

A name counts as mentioned where it stands alone: not inside a longer identifier (ASCII
letters, digits, `_`, `-` on either side) and not as a `{placeholder}`. Chinese text around a
name is a boundary, so "用 get_price 查价" and "用get_price查价" both mention `get_price`.

    >>> Replacer({"get_price": "fetchCost"}).sub("先用get_price查价，再调 get_price_v2")
    '先用fetchCost查价，再调 get_price_v2'
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_BEFORE = r"(?<![A-Za-z0-9_\-{])"
_AFTER = r"(?![A-Za-z0-9_\-])"
TOKEN = re.compile(_BEFORE + r"[A-Za-z_][A-Za-z0-9_\-]*" + _AFTER)


def tokens(text: str) -> set[str]:
    """The identifier-like tokens of a text (what a mention can be)."""
    return set(TOKEN.findall(text))


class Replacer:
    """Replace every mention of the table's keys by their values, in one pass."""

    def __init__(self, table: Mapping[str, str]):
        self.table = {k: v for k, v in table.items() if k != v}
        if self.table:
            alternatives = "|".join(re.escape(k) for k in sorted(self.table, key=len, reverse=True))
            self.regex: re.Pattern | None = re.compile(f"{_BEFORE}(?:{alternatives}){_AFTER}")
        else:
            self.regex = None

    def sub(self, text: str) -> str:
        """`text` with every mention replaced (the same object when nothing matches)."""
        if self.regex is None or not text:
            return text
        return self.regex.sub(self._swap, text)

    def _swap(self, match: re.Match) -> str:
        return self.table[match.group(0)]
