"""Harness versions: the list (author, note, time, hash, live marker, retrain status) and one
version rendered as the model sees it (system prompt + tools), or as YAML."""

import streamlit as st

from db.harness_repo import list_lines
from ui import store
from ui.session import require_user
from ui.views.harness import as_yaml, rendered_text, version_rows
from ui.views.paging import PAGE, cursor, pager, reset

require_user("harness.view")
st.title("Harness versions")
lines = store.read(list_lines)
if not lines:
    st.info("No harness version is stored yet: submit one on *Edit and submit*.")
    st.stop()
line = st.selectbox("Harness line", lines, key="versions_line",
                    on_change=reset, args=("versions",)) if len(lines) > 1 else lines[0]
rows, versions = store.read(
    lambda s: version_rows(s, line=line, before_id=cursor("versions"), limit=PAGE))
st.dataframe(rows, hide_index=True, width="stretch")
pager("versions", last_id=versions[-1].id if versions else None, full=len(versions) == PAGE)

if versions:
    by_label = {f"v{v.number} — {v.note or v.author}": v for v in versions}
    chosen = by_label[st.selectbox("Show version", list(by_label), key="versions_show")]
    st.caption(f"{chosen.line} v{chosen.number} · by {chosen.author} · "
               f"{chosen.created_at:%Y-%m-%d %H:%M} UTC · hash `{chosen.content_hash}` · "
               f"parent {chosen.parent_number or '-'}")
    prompt_tab, tools_tab, yaml_tab = st.tabs(["System prompt", "Tools", "YAML"])
    system_prompt, tools = rendered_text(chosen.harness())
    prompt_tab.code(system_prompt, language=None, wrap_lines=True)
    tools_tab.json(tools, expanded=2)
    yaml_tab.code(as_yaml(chosen), language="yaml")
