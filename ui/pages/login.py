"""Login page: a user name and password checked against the store (argon2id hashes)."""

import streamlit as st

from ui.session import log_in

st.title("HAT Ops console")
with st.form("login"):
    name = st.text_input("User name", key="login_name")
    password = st.text_input("Password", type="password", key="login_password")
    submitted = st.form_submit_button("Log in", key="login_submit")
if submitted:
    if log_in(name.strip(), password) is None:
        st.error("Unknown user or wrong password.")
    else:
        st.rerun()
