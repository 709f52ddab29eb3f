"""Keyset paging for the console's tables: a stack of cursors in the session state.

    before = cursor("versions")              # None on the first page
    rows = query(before_id=before, limit=PAGE)
    pager("versions", last_id=rows[-1].id if rows else None, full=len(rows) == PAGE)
"""

from __future__ import annotations

import streamlit as st

PAGE = 50


def cursor(key: str) -> int | None:
    """The keyset cursor of the page being shown (None: the newest page)."""
    stack = st.session_state.get(f"_page_{key}", [])
    return stack[-1] if stack else None


def page_number(key: str) -> int:
    """1 for the newest page, 2 for the next ..."""
    return len(st.session_state.get(f"_page_{key}", [])) + 1


def reset(key: str) -> None:
    """Back to the newest page (when a filter changes)."""
    st.session_state[f"_page_{key}"] = []


def pager(key: str, *, last_id: int | None, full: bool) -> None:
    """Newer/older buttons under a table; older is offered when the page was full."""
    left, mid, right = st.columns([1, 1, 6])
    left.button("◀ Newer", key=f"_newer_{key}", disabled=page_number(key) == 1,
                on_click=_newer, args=(key,))
    mid.button("Older ▶", key=f"_older_{key}", disabled=not full or last_id is None,
               on_click=_older, args=(key, last_id))
    right.caption(f"page {page_number(key)}")


def _newer(key: str) -> None:
    st.session_state[f"_page_{key}"] = st.session_state.get(f"_page_{key}", [])[:-1]


def _older(key: str, last_id: int) -> None:
    st.session_state[f"_page_{key}"] = [*st.session_state.get(f"_page_{key}", []), last_id]
