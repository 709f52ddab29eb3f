"""The HAT Ops operator console: the login gate and the role-dependent page menu.

Run it with `hat ui [--host 127.0.0.1] [--port 8501]` (or `streamlit run ui/app.py`). The
database comes from the settings (`HAT_DATABASE_URL`, else `$HAT_HOME/hat.db`); the users
and roles from the store (`hat user add NAME --role R`). See docs/console.md.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui.nav import pages_for
from ui.session import current_user
from ui.views.markdown import plain

PAGES = Path(__file__).resolve().parent / "pages"


def main() -> None:
    st.set_page_config(page_title="HAT Ops console", page_icon=":material/tune:", layout="wide")
    user = current_user()
    if user is None:
        st.navigation([st.Page(PAGES / "login.py", title="Log in", icon=":material/login:")],
                      position="hidden").run()
        return
    menu = {
        section: [st.Page(PAGES / p.file, title=p.title, icon=p.icon) for p in specs]
        for section, specs in pages_for(user.role).items()
    }
    menu["Account"] = [st.Page(PAGES / "logout.py", title="Log out", icon=":material/logout:")]
    with st.sidebar:
        st.caption(f"Signed in as **{plain(user.name)}** ({user.role})")
    st.navigation(menu, expanded=True).run()  # every section shown, none under "View more"


main()
