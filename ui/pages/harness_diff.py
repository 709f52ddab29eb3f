"""Diff of two harness versions: the semantic change list (surface vs semantic), the two
versions side by side (YAML and the rendered system prompt) and per-section text diffs."""

import streamlit as st

from db.harness_repo import get_version, latest_version, list_lines
from ui import store
from ui.session import require_user
from ui.views.harness import as_yaml, change_rows, rendered_text, semantic_diff, side_by_side

require_user("harness.view")
st.title("Harness diff")
lines = store.read(list_lines)
if not lines:
    st.info("No harness version is stored yet.")
    st.stop()
line = st.selectbox("Harness line", lines, key="diff_line") if len(lines) > 1 else lines[0]
newest = store.read(lambda s: latest_version(s, line=line))
left, right = st.columns(2)
before_n = left.number_input("Before (version)", 1, newest.number,
                             max(1, newest.number - 1), key="diff_before")
after_n = right.number_input("After (version)", 1, newest.number, newest.number,
                             key="diff_after")
before = store.read(lambda s: get_version(s, number=int(before_n), line=line))
after = store.read(lambda s: get_version(s, number=int(after_n), line=line))
diff = semantic_diff(before, after)

verdict = "surface only" if diff.is_surface_only else "SEMANTIC"
st.subheader(f"v{before.number} → v{after.number}: {len(diff.changes)} change(s), {verdict}")
c1, c2 = st.columns(2)
c1.metric("Semantic changes", len(diff.semantic))
c2.metric("Surface changes", len(diff.surface))
if diff.is_empty:
    st.info("The two versions are identical.")
else:
    st.dataframe(change_rows(diff), hide_index=True, width="stretch")

yaml_tab, prompt_tab, sections_tab = st.tabs(
    ["Side by side (YAML)", "Side by side (system prompt)", "Section text diffs"])
with yaml_tab:
    st.html(side_by_side(as_yaml(before), as_yaml(after),
                         left=f"v{before.number}", right=f"v{after.number}"))
with prompt_tab:
    st.html(side_by_side(rendered_text(before.harness())[0], rendered_text(after.harness())[0],
                         left=f"v{before.number}", right=f"v{after.number}"))
with sections_tab:
    texts = [c for c in diff.changes if c.text_diff]
    for change in texts:
        st.markdown(f"**{change.summary}** ({change.classification})")
        st.code(change.text_diff, language="diff")
    if not texts:
        st.caption("No prompt section text was edited.")
