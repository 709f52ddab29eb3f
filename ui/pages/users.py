"""Users (admins only): who may log in, with which role; add a user, change a role or a
password, remove a user. Each change is audited and ends that user's sessions."""

import streamlit as st

from db.credentials import MIN_PASSWORD
from db.errors import StoreError
from db.users_repo import add_user, list_users, remove_user, set_password, set_role
from ui import store
from ui.auth import ROLES
from ui.flash import flash_and_rerun, show_flash
from ui.session import require_user
from ui.views.markdown import plain

admin = require_user("users.manage")
st.title("Users")
show_flash()
users = store.read(list_users)
st.dataframe([{"name": u.name, "role": u.role, "created": f"{u.created_at:%Y-%m-%d %H:%M}"}
              for u in users], hide_index=True, width="stretch")
PASSWORD_HELP = f"{MIN_PASSWORD} characters or more, not a common password"


def run(change, done: str) -> None:
    """Apply `change(session)` in one transaction; a refusal shows as an error."""
    try:
        store.write(change)
    except StoreError as exc:
        st.error(str(exc))
    else:
        flash_and_rerun(done)


st.subheader("Add a user")
with st.form("add_user", clear_on_submit=True):
    name = st.text_input("Name (letters, digits, '.', '_', '-')", key="new_user_name")
    role = st.selectbox("Role", ROLES, key="new_user_role")
    password = st.text_input(f"Password ({PASSWORD_HELP})", type="password",
                             key="new_user_password")
    added = st.form_submit_button("Add user", key="add_user_submit")
if added:
    run(lambda s: add_user(s, name=name.strip(), role=role, password=password,
                           actor=admin.name), f"Added {plain(name.strip())} ({role}).")

st.subheader("Change a user")
names = [u.name for u in users]
if st.session_state.get("change_user_name") not in names:  # e.g. the one just removed
    st.session_state.pop("change_user_name", None)
target = st.selectbox("User", names, key="change_user_name")
with st.form("set_role"):
    new_role = st.selectbox("New role", ROLES, key="change_user_role")
    if st.form_submit_button("Change role", key="set_role_submit"):
        run(lambda s: set_role(s, name=target, role=new_role, actor=admin.name),
            f"{plain(target)} is now {new_role}; their sessions ended.")
with st.form("set_password", clear_on_submit=True):
    new_password = st.text_input(f"New password ({PASSWORD_HELP})", type="password",
                                 key="change_user_password")
    if st.form_submit_button("Set password", key="set_password_submit"):
        run(lambda s: set_password(s, name=target, password=new_password, actor=admin.name),
            f"Password of {plain(target)} changed; their sessions ended.")
with st.form("remove_user"):
    sure = st.checkbox(f"Yes, remove {plain(target)}", key="remove_user_sure")
    if st.form_submit_button("Remove user", key="remove_user_submit"):
        if not sure:
            st.error("Tick the box to confirm the removal.")
        else:
            run(lambda s: remove_user(s, name=target, actor=admin.name),
                f"Removed {plain(target)}; their sessions ended.")
