"""Retrain jobs: state, trigger (event, cron or hand) and stages, from the store and from
Prefect; start a retrain of a harness version through the Prefect deployment."""

import streamlit as st

from db.console_queries import jobs_page
from db.harness_repo import latest_version, list_lines
from db.models import JOB_STATES
from ui import store
from ui.session import allowed, require_user
from ui.views.paging import PAGE, cursor, pager, reset
from ui.views.retrain import DEPLOYMENT, prefect_api_url, recent_flow_runs, start_retrain

user = require_user("runs.view")
st.title("Retrain jobs")
TRIGGERS = {"harness_change": "event", "weekly": "cron", "manual": "hand"}

state = st.selectbox("State", ["any", *JOB_STATES], key="runs_state",
                     on_change=reset, args=("jobs",))
jobs = store.read(lambda s: jobs_page(s, state=None if state == "any" else state,
                                      before_id=cursor("jobs"), limit=PAGE))
st.dataframe([{"job": j.job.id, "harness": f"{j.line} v{j.number}", "state": j.job.state,
               "trigger": j.job.trigger, "started by": TRIGGERS.get(j.job.trigger, "other"),
               "attempts": j.job.attempts, "reason": j.job.reason,
               "updated": f"{j.job.updated_at:%Y-%m-%d %H:%M}"} for j in jobs],
             hide_index=True, width="stretch")
pager("jobs", last_id=jobs[-1].job.id if jobs else None, full=len(jobs) == PAGE)

with st.form("open_job"):
    job_id = st.number_input("Open job", min_value=1, step=1,
                             value=jobs[0].job.id if jobs else 1, key="runs_open_id")
    if st.form_submit_button("Open job page", key="open_job_submit"):
        st.session_state["job_id"] = int(job_id)
        st.switch_page("pages/job.py")

api_url = prefect_api_url(store.settings().prefect_api_url)
with st.expander(f"Prefect flow runs of {DEPLOYMENT}"):
    if st.button("Load from Prefect", key="runs_prefect"):
        runs, why = recent_flow_runs(api_url)
        if why:
            st.warning(why)
        st.dataframe(runs, hide_index=True, width="stretch")

if allowed("retrain.start"):
    st.subheader("Start a retrain")
    lines = store.read(list_lines)
    if lines:
        line = st.selectbox("Harness line", lines, key="retrain_line")
        newest = store.read(lambda s: latest_version(s, line=line))
        number = st.number_input("Harness version", 1, newest.number, newest.number,
                                 key="retrain_number")
        if st.button("Start retrain", type="primary", key="retrain_start"):
            result = start_retrain(line=line, number=int(number), actor=user.name,
                                   api_url=api_url)
            (st.success if result.ok else st.error)(result.message)
