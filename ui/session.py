"""The logged-in user of this browser session: login, logout, restore after a reload.

The user (a frozen `db.values.User`) lives in `st.session_state["user"]`; the signed token
(`ui.auth`) is mirrored into the URL as `?session=...` on every run, so a reload, which
starts a fresh Streamlit session, logs the same user back in (role re-read from the store).
"""

from __future__ import annotations

import time

import streamlit as st

from db.users_repo import get_user, verify_user
from db.values import User
from ui import store
from ui.auth import PermissionDenied, can, load_secret, make_token, read_token

USER_KEY = "user"
TOKEN_PARAM = "session"


def current_user() -> User | None:
    """The logged-in user, restored from the URL token when the session is new."""
    user = st.session_state.get(USER_KEY)
    if user is None:
        user = _restore()
    if user is not None:
        _keep_token(user)
    return user


def log_in(name: str, password: str) -> User | None:
    """Check the password against the store; on success the session holds the user."""
    user = store.read(lambda s: verify_user(s, name=name, password=password))
    if user is not None:
        st.session_state[USER_KEY] = user
        _keep_token(user)
    return user


def log_out() -> None:
    """Forget the user and remove the token from the URL."""
    st.session_state.pop(USER_KEY, None)
    st.query_params.pop(TOKEN_PARAM, None)


def allowed(action: str) -> bool:
    """Whether the logged-in user may do `action`."""
    user = st.session_state.get(USER_KEY)
    return user is not None and can(user.role, action)


def require_user(action: str) -> User:
    """The user, if allowed `action`; else an error on the page and the run stops."""
    user = st.session_state.get(USER_KEY)
    if user is None or not can(user.role, action):
        role = user.role if user else "anonymous"
        st.error(f"Not allowed: the {role} role may not {action}.")
        st.stop()
    return user


def check(action: str) -> User:
    """The user, if allowed `action`; else `PermissionDenied` (for action handlers)."""
    user = st.session_state.get(USER_KEY)
    if user is None or not can(user.role, action):
        raise PermissionDenied(f"{user.role if user else 'anonymous'} may not {action}")
    return user


def _secret() -> bytes:
    return load_secret(store.settings().home)


def _restore() -> User | None:
    token = st.query_params.get(TOKEN_PARAM)
    if not token:
        return None
    name = read_token(token, _secret(), now=time.time())
    user = store.read(lambda s: get_user(s, name=name)) if name else None
    if user is None:
        st.query_params.pop(TOKEN_PARAM, None)
        return None
    st.session_state[USER_KEY] = user
    st.session_state["_token"] = token
    return user


def _keep_token(user: User) -> None:
    token = st.session_state.get("_token")
    if not token or read_token(token, _secret(), now=time.time() + 60) != user.name:
        token = make_token(user.name, _secret(), now=time.time())
        st.session_state["_token"] = token
    if st.query_params.get(TOKEN_PARAM) != token:
        st.query_params[TOKEN_PARAM] = token
