"""Users (admins only): who may log in, with which role; add a user."""

import streamlit as st

from db.credentials import MIN_PASSWORD
from db.errors import StoreError
from db.users_repo import add_user, list_users
from ui import store
from ui.auth import ROLES
from ui.session import require_user
from ui.views.markdown import plain

admin = require_user("users.manage")
st.title("Users")
st.dataframe([{"name": u.name, "role": u.role, "created": f"{u.created_at:%Y-%m-%d %H:%M}"}
              for u in store.read(list_users)], hide_index=True, width="stretch")
with st.form("add_user", clear_on_submit=True):
    name = st.text_input("Name (letters, digits, '.', '_', '-')", key="new_user_name")
    role = st.selectbox("Role", ROLES, key="new_user_role")
    password = st.text_input(f"Password ({MIN_PASSWORD} characters or more, not a common one)",
                             type="password",
                             key="new_user_password")
    added = st.form_submit_button("Add user", key="add_user_submit")
if added:
    try:
        user = store.write(lambda s: add_user(s, name=name.strip(), role=role,
                                              password=password, actor=admin.name))
    except StoreError as exc:
        st.error(str(exc))
    else:
        st.success(f"Added {plain(user.name)} ({user.role}).")
