"""Login page: a user name and password checked against the store (argon2id hashes), behind
the login throttle (`db.login_repo`); a success opens a session in the store (`ui.session`)."""

import streamlit as st

from ui.session import log_in, take_notice

st.title("HAT Ops console")
notice = take_notice()
if notice:
    st.info(notice)
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
