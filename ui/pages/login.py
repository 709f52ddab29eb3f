"""Login page: a user name and password checked against the store (argon2id hashes), behind
the login throttle (`db.login_repo`), and, with SSO configured, a button that signs in at the
OIDC provider (`st.login`); either opens a session in the store (`ui.session`). With
`HAT_SSO_ONLY` the password form is not shown."""

import streamlit as st

from ui.session import log_in, sso, sso_ready, sso_refusal, take_notice

st.title("HAT Ops console")
notice = take_notice()
if notice:
    st.info(notice)
config = sso()
if config is not None:
    refusal = sso_refusal()
    if refusal:
        st.error(refusal)
    if not sso_ready():
        st.error("SSO is set in the settings, but Streamlit has no [auth] secrets: start the "
                 "console with `hat ui`, which writes them.")
    elif st.button("Log in with SSO", key="sso_login", type="primary"):
        st.login()
if config is None or not config.only:
    with st.form("login"):
        name = st.text_input("User name", key="login_name")
        password = st.text_input("Password", type="password", key="login_password")
        submitted = st.form_submit_button("Log in", key="login_submit")
    if submitted:
        refusal = log_in(name.strip(), password)
        if refusal:
            st.error(refusal)
        else:
            st.rerun()
