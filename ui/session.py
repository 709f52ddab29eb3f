"""The logged-in user of this browser session: log in, re-read on every run, log out.

A login opens a session in the store (`db.login_repo.attempt_login`, throttled) and keeps
its random token in Streamlit's own session state, on the server: it is never in the URL or
the page, and a browser reload (a new Streamlit session) asks for the password again. Each
run looks the token up (`db.sessions_repo.session_user`), so the user and role are the
store's current ones; a revoked or expired session, a removed user or a changed password
logs the tab out at its next interaction. The session ends `SESSION_TTL_S` after the login,
never later. A `?session=` left in the URL by older versions is ignored and removed.

With single sign-on configured (`ui.sso_config`), Streamlit's `st.login` signs the browser in
at the OIDC provider and keeps the ID token's claims in its identity cookie (`st.user`); a
run with such a sign-in and no session turns it into a store session (`db.sso_repo.sso_login`:
the user linked to the identity, else refused and audited), which then works like a password
session. Logging out revokes that session (every tab of the sign-in shares it, and the same
sign-in never opens another) and clears the cookie at the provider too (`st.logout`).
"""

from __future__ import annotations

import streamlit as st

from db.login_repo import attempt_login
from db.sessions_repo import revoke_session, session_user
from db.sso_repo import sso_login
from db.values import User
from ui import store
from ui.auth import PermissionDenied, can
from ui.sso_config import SsoConfig, sign_in_of, sso_config

USER_KEY = "user"
TOKEN_KEY = "session_token"
NOTICE_KEY = "_session_notice"
SSO_KEY = "_sso_session"  # the session came from an SSO sign-in
REFUSED_KEY = "_sso_refused"  # (sign-in key, why) of a refused sign-in: asked once
OLD_URL_PARAM = "session"


def current_user() -> User | None:
    """The logged-in user as the store has it now; None (and the token forgotten) when the
    session is gone, expired or revoked."""
    st.query_params.pop(OLD_URL_PARAM, None)
    token = st.session_state.get(TOKEN_KEY) or _sso_token()
    user = store.read(lambda s: session_user(s, token=token)) if token else None
    if user is None:
        if token:
            st.session_state[NOTICE_KEY] = "Your session ended; log in again."
        st.session_state.pop(TOKEN_KEY, None)
        st.session_state.pop(USER_KEY, None)
        st.session_state.pop(SSO_KEY, None)
        return None
    st.session_state[USER_KEY] = user
    return user


def sso() -> SsoConfig | None:
    """The console's SSO settings (None: passwords only)."""
    return sso_config(store.settings())


def sso_ready() -> bool:
    """Whether Streamlit has the `[auth]` secrets `st.login` needs (`hat ui` writes them)."""
    return "is_logged_in" in st.user


def sso_refusal() -> str | None:
    """Why this browser's SSO sign-in gives no access, if it was refused."""
    refused = st.session_state.get(REFUSED_KEY)
    return refused[1] if refused else None


def _sso_token() -> str | None:
    """The store session of this browser's SSO sign-in, opened on first use; None without
    SSO, without a sign-in, or when the sign-in is refused (remembered in this Streamlit
    session, so it is asked and audited once per page load, not on every run)."""
    config = sso()
    if config is None or not sso_ready() or not st.user.get("is_logged_in"):
        return None
    sign_in = sign_in_of(st.user.to_dict(), config)
    if isinstance(sign_in, str):
        st.session_state[REFUSED_KEY] = ("", sign_in)
        return None
    refused = st.session_state.get(REFUSED_KEY)
    if refused and refused[0] == sign_in.key:
        return None
    result = store.write(lambda s: sso_login(s, sign_in=sign_in))
    if result.token is None:
        st.session_state[REFUSED_KEY] = (sign_in.key, result.refusal)
        return None
    st.session_state[TOKEN_KEY] = result.token
    st.session_state[SSO_KEY] = True
    st.session_state.pop(REFUSED_KEY, None)
    return result.token


def log_in(name: str, password: str) -> str:
    """Check the password (throttled); on success the session holds the token and the user.
    Returns "" on success, else why the login was refused (always, with `HAT_SSO_ONLY`)."""
    config = sso()
    if config is not None and config.only:
        return "Passwords are off for the console here: log in with SSO."
    address = _client_address()
    result = store.write(lambda s: attempt_login(s, name=name, password=password,
                                                 client_address=address))
    if result.token is not None:
        st.session_state[TOKEN_KEY] = result.token
        st.session_state[USER_KEY] = result.user
        st.session_state.pop(SSO_KEY, None)
        st.session_state.pop(NOTICE_KEY, None)
    return result.refusal


def _client_address() -> str | None:
    """The browser's address as Streamlit saw it; None on the loopback, or when there is no
    connection to ask (a test run: anything but a string counts as unknown)."""
    address = st.context.ip_address
    return address if isinstance(address, str) else None


def log_out() -> None:
    """End the session in the store and forget the user; after an SSO sign-in, also clear
    the identity cookie and log out at the provider (`st.logout` redirects the browser)."""
    token = st.session_state.pop(TOKEN_KEY, None)
    st.session_state.pop(USER_KEY, None)
    if token:
        store.write(lambda s: revoke_session(s, token=token))
    if st.session_state.pop(SSO_KEY, False):
        st.logout()


def take_notice() -> str | None:
    """Why the last session ended, once (for the login page)."""
    return st.session_state.pop(NOTICE_KEY, None)


def allowed(action: str) -> bool:
    """Whether the logged-in user may do `action`."""
    user = st.session_state.get(USER_KEY)
    return user is not None and can(user.role, action)


def require_user(action: str) -> User:
    """The user as the store has it now, if allowed `action`; else an error on the page and
    the run stops. Every page calls it first, so a page checks the store itself even when
    Streamlit runs it without `ui/app.py` (as AppTest does after `switch_page`, and the server
    for a process's first request to a page of the `pages/` folder); `allowed` and `check`
    then use the user read here."""
    user = current_user()
    if user is None or not can(user.role, action):
        notice = take_notice() if user is None else None
        if notice:
            st.info(notice)
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
