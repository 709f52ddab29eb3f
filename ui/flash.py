"""A message that survives one rerun: set it, rerun (so the page redraws with the new
state), and the next run shows it once."""

from __future__ import annotations

import streamlit as st

_KEY = "_flash"


def flash_and_rerun(message: str, kind: str = "success") -> None:
    """Remember `message` and rerun the script now."""
    st.session_state[_KEY] = (kind, message)
    st.rerun()


def show_flash() -> None:
    """Show (and forget) the remembered message, if any."""
    kind, message = st.session_state.pop(_KEY, (None, None))
    if message:
        getattr(st, kind)(message)
