"""Logout page: ends the session in the store and forgets the user."""

import streamlit as st

from ui.session import log_out

log_out()
st.success("You are logged out.")
st.button("Log in again", key="login_again")  # any click reruns: the login page shows
