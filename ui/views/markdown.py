"""Text that goes into markdown as written: `plain(name)` escapes every markdown character.

Names and other user-written strings shown with `st.markdown` or `st.caption` go through it,
so `[u](javascript:...)` shows as those characters, never as a link or emphasis.
"""

from __future__ import annotations

import re

MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!<>|~$:])")


def plain(text: str) -> str:
    """`text` with a backslash before every markdown character."""
    return MARKDOWN.sub(r"\\\1", text)
