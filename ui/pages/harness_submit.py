"""Edit and submit a harness: a YAML editor (pre-filled with the newest version) or an
upload; every validation problem is shown with its path and nothing is stored until valid.
After storing, the harness-change event goes to the configured Prefect API (a warning if it
cannot: the reconciler delivers the version from the outbox)."""

import streamlit as st

from db.harness_repo import find_version_by_hash, latest_version, list_lines
from hat_core.diff.api import diff_harness
from hat_core.events import announce_version_created, prefect_api_url
from ui import store
from ui.session import require_user
from ui.views.harness import as_yaml, change_rows, submit_valid, validate_text, validate_upload

user = require_user("harness.submit")
st.title("Edit and submit a harness")
lines = store.read(list_lines)
line = st.selectbox("Start from the newest version of", lines, key="submit_line") if lines else None
base = store.read(lambda s: latest_version(s, line=line)) if line else None
if "harness_text" not in st.session_state:
    st.session_state["harness_text"] = as_yaml(base) if base else ""

st.text_area("Harness (YAML or JSON)", key="harness_text", height=420)
uploaded = st.file_uploader("…or upload a harness file", type=["yaml", "yml", "json"])
note = st.text_input("Note: what changed and why", key="submit_note")
submitted = st.button("Validate and submit", type="primary", key="submit_harness")
if not submitted:
    st.stop()

result = (validate_upload(uploaded.name, uploaded.getvalue()) if uploaded
          else validate_text(st.session_state["harness_text"]))
if result.harness is None:
    st.error(f"Not stored: {len(result.problems)} problem(s). {result.message}")
    st.dataframe([{"path": p.path or "(document)", "problem": p.message} for p in result.problems],
                 hide_index=True, width="stretch")
    st.stop()
harness = result.harness
known = store.read(lambda s: find_version_by_hash(
    s, line=harness.harness, content_hash=harness.content_hash()))
if known is not None:
    st.info(f"Identical to stored version {known.number} of {known.line}; nothing new stored.")
    st.stop()
version = store.write(lambda s: submit_valid(s, harness=harness, author=user.name, note=note))
st.success(f"Stored version {version.number} of {version.line} "
           f"(hash {version.content_hash[:12]}); a retrain will be decided for it.")
api_url = prefect_api_url(store.settings().prefect_api_url)
sent = announce_version_created(version.line, version.number, api_url=api_url,
                                emitter="console")
(st.caption if sent.ok or api_url is None else st.warning)(sent.message)
if base is not None and base.line == version.line:
    diff = diff_harness(base.harness(), harness)
    st.markdown(f"**Against v{base.number}:** {len(diff.semantic)} semantic, "
                f"{len(diff.surface)} surface change(s). See *Diff* for the details.")
    st.dataframe(change_rows(diff), hide_index=True, width="stretch")
