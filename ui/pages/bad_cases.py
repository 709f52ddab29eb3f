"""The bad-case review queue: filter by harness version, checkpoint, failure type and state;
read the full trajectory; label it (agree or disagree with the judge, the correct failure
type), comment, and send it to the training data of the next build."""

import streamlit as st

from db.badcases_repo import count_bad_cases, list_bad_cases
from db.console_queries import failure_types, models_page
from db.harness_repo import get_version, list_lines
from db.models import REVIEW_STATES
from hat_core.errors import NotFoundError
from hat_core.sim.judge import FAILURE_TYPES
from ui import store
from ui.flash import flash_and_rerun, show_flash
from ui.session import allowed, require_user
from ui.views.episode import show_episode
from ui.views.markdown import plain
from ui.views.paging import PAGE, cursor, pager, reset
from ui.views.review import (
    NOT_A_FAILURE,
    case_rows,
    label_case,
    queue_filter,
    training_state,
)


@st.cache_data(ttl=300, show_spinner=False)
def _failure_types(url: str) -> tuple[str, ...]:
    return store.read(failure_types)


user = require_user("bad_cases.view")
st.title("Bad cases")
show_flash()
url = store.settings().resolved_database_url()
models = {m.model.id: f"{m.model.registry_name} v{m.model.version}"
          for m in store.read(lambda s: models_page(s, limit=100))}
lines = store.read(list_lines)
c1, c2, c3, c4 = st.columns(4)
version_n = c1.number_input("Harness version (0: any)", 0, step=1, key="bc_version",
                            on_change=reset, args=("bad_cases",))
model_id = c2.selectbox("Checkpoint", [None, *models], key="bc_model",
                        format_func=lambda i: "any" if i is None else models[i],
                        on_change=reset, args=("bad_cases",))
failure = c3.selectbox("Failure type", ["any", *_failure_types(url)], key="bc_failure",
                       on_change=reset, args=("bad_cases",))
state = c4.selectbox("State", ["new", "any", *[s for s in REVIEW_STATES if s != "new"]],
                     key="bc_state", on_change=reset, args=("bad_cases",))
line = st.selectbox("Harness line", lines, key="bc_line") if len(lines) > 1 else \
    (lines[0] if lines else None)
version_id = None
if version_n and line:
    try:
        version_id = store.read(lambda s: get_version(s, number=int(version_n), line=line)).id
    except NotFoundError as exc:
        st.warning(str(exc))
        st.stop()
where = queue_filter(harness_version_id=version_id, model_version_id=model_id,
                     failure_type=failure, review_state=state)
total = store.read(lambda s: count_bad_cases(s, where=where))
cases = store.read(lambda s: list_bad_cases(s, where=where, after_id=cursor("bad_cases"),
                                            limit=PAGE))
st.caption(f"{total:,} matching bad case(s)")
st.dataframe(case_rows(cases), hide_index=True, width="stretch")
pager("bad_cases", last_id=cases[-1].id if cases else None, full=len(cases) == PAGE)
if not cases:
    st.stop()

by_id = {c.id: c for c in cases}
case = by_id[st.selectbox("Open case", list(by_id), key="bc_case",
                          format_func=lambda i: f"#{i} {by_id[i].failure_type}")]
st.subheader(f"Case #{case.id}: judged {case.failure_type} · {case.review_state}")
if case.reviewer:
    st.caption(f"reviewed by {plain(case.reviewer)}: label {case.label or '-'}; {case.comment}")
if case.send_to_training or case.consumed_by_build:
    st.caption(f"training: {training_state(case)}"
               + ("" if case.consumed_by_build else ", waiting for the next data build"))
left, right = st.columns([3, 2])
with left:
    show_episode(case.episode, case.judge_scores)
with right:
    if not allowed("bad_cases.label"):
        st.info("Viewers can read the queue; reviewers label it.")
        st.stop()
    with st.form("label_case"):
        verdict = st.radio("The judge says " + case.failure_type,
                           ["agree", "disagree"], horizontal=True, key="bc_verdict")
        correct = st.selectbox("Correct failure type (when you disagree)",
                               [NOT_A_FAILURE, *FAILURE_TYPES], key="bc_correct")
        comment = st.text_area("Comment", key="bc_comment")
        to_training = st.checkbox("Send to training data", key="bc_training")
        saved = st.form_submit_button("Save review", type="primary", key="bc_save")
    if saved:
        done = store.write(lambda s: label_case(
            s, user=user, case=case, agree=verdict == "agree", correct_type=correct,
            comment=comment, send_to_training=to_training))
        flash_and_rerun(f"Case #{done.id} saved: {done.review_state}, label {done.label}"
                        + (", sent to training data" if done.send_to_training else ""))
