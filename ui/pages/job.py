"""One retrain job: the stage it reached, its stops and retries (and a Retry button for
operators when it failed), its stages with metrics, reward-component curves, the eval report
and latency percentiles of the model versions it registered, with links into MLflow."""

import streamlit as st

from db.console_queries import job_listing, models_of_job
from db.job_retries import retry_job
from db.jobs_repo import list_stage_runs
from db.release_repo import list_eval_results
from hat_core.errors import HatError
from hat_core.release.rules import gates_of
from ui import store
from ui.flash import flash_and_rerun, show_flash
from ui.session import allowed, check, require_user
from ui.views import charts
from ui.views.mlflow_curves import stage_curves
from ui.views.mlflow_links import mlflow_ui_base, model_link, run_link
from ui.views.runs import curve_points, eval_rows, latency_rows, reward_points, stage_rows

require_user("runs.view")
st.title("Retrain job")
show_flash()
job_id = st.number_input("Job id", min_value=1, step=1,
                         value=int(st.session_state.get("job_id", 1)), key="job_page_id")
listing = store.read(lambda s: job_listing(s, job_id=int(job_id)))
if listing is None:
    st.warning(f"There is no job {int(job_id)}.")
    st.stop()
job = listing.job
st.subheader(f"Job {job.id}: {listing.line} v{listing.number} — {job.state}")
st.caption(f"trigger {job.trigger} · attempts {job.attempts} · created "
           f"{job.created_at:%Y-%m-%d %H:%M} · updated {job.updated_at:%Y-%m-%d %H:%M}"
           + (f" · {job.reason}" if job.reason else ""))
if job.stage:
    st.caption(f"stage reached: {job.stage}"
               + (f" · resumes after {job.retry_at:%Y-%m-%d %H:%M:%S} UTC (by `hat serve`)"
                  if job.retry_at else ""))
if job.history:
    with st.expander(f"Stops and retries ({len(job.history)})"):
        st.dataframe(job.history, hide_index=True, width="stretch")
if job.state == "failed" and allowed("retrain.start") and st.button(
        "Retry", key="job_retry", help="queue the job again: `hat serve` resumes it at the "
                                       "stage it reached, reusing the stages it finished"):
    try:
        who = check("retrain.start")
        store.write(lambda s: retry_job(s, job_id=job.id, actor=who.name))
    except HatError as exc:
        st.error(f"Retry refused: {exc.report()}")
    else:
        flash_and_rerun(f"Job {job.id} is queued again: `hat serve` resumes it at "
                        f"{job.stage or 'its start'}.")
config = store.settings()
base = mlflow_ui_base(config.mlflow_tracking_uri, config.mlflow_ui_url)

stages = store.read(lambda s: list_stage_runs(s, job_id=job.id))
st.markdown("#### Stages")
if not stages:
    st.info("No stage has reported yet.")
else:
    rows = stage_rows(stages)
    for row in rows if base else []:
        row["MLflow"] = run_link(base, row["mlflow run"])
    st.dataframe(rows, hide_index=True, width="stretch",
                 column_config={"MLflow": st.column_config.LinkColumn(display_text="open")})
    points = curve_points(stages)
    if st.button("Load curves from MLflow", key="job_mlflow_curves"):
        points, problems = stage_curves(store.settings().resolved_mlflow_uri(), stages)
        for problem in problems:
            st.warning(problem)
    rewards = reward_points(points)
    if rewards:
        st.altair_chart(charts.curves(rewards, title="Reward components"))
    other = [p for p in points if not p["metric"].startswith("rewards/")]
    if other:
        st.altair_chart(charts.curves(other, title="Training curves"))

st.markdown("#### Model versions and eval report")
models = store.read(lambda s: models_of_job(s, job_id=job.id))
if not models:
    st.info("This job registered no model version.")
for model in models:
    link = model_link(base, model.registry_name, model.version)
    st.markdown(f"**{model.registry_name} v{model.version}**"
                + (f" · [MLflow]({link})" if link else ""))
    st.dataframe([{"gate": g.name, "verdict": g.verdict, "detail": g.detail}
                  for g in gates_of(model.gate_results)], hide_index=True)
    results = store.read(lambda s, m=model: list_eval_results(s, model_version_id=m.id))
    st.dataframe(eval_rows(results), hide_index=True, width="stretch")
    latency = latency_rows(results, f"v{model.version}")
    if latency:
        st.altair_chart(charts.latency(latency))
