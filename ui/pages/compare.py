"""Compare two checkpoints (model versions), or one against the champion: the eval results
side by side with deltas, as a table and charts, with links into the MLflow UI."""

import streamlit as st

from db.console_queries import models_page
from db.release_repo import current_promotion, list_eval_results
from hat_core.release.rules import SLOT
from ui import store
from ui.session import require_user
from ui.views import charts
from ui.views.mlflow_links import mlflow_ui_base, model_link, run_link
from ui.views.runs import comparison_rows, latency_rows, long_form

require_user("runs.view")
st.title("Compare checkpoints")
listings = store.read(lambda s: models_page(s, limit=200))
if not listings:
    st.info("No model version is registered yet.")
    st.stop()
champion = store.read(lambda s: current_promotion(s, slot=SLOT))
names = {m.model.id: f"{m.model.registry_name} v{m.model.version}"
         + (f" (harness {m.line} v{m.number})" if m.number else "") for m in listings}
ids = list(names)
mode = st.radio("Compare", ["against the champion", "two checkpoints"], horizontal=True,
                key="compare_mode")
b_id = st.selectbox("Checkpoint", ids, format_func=names.get, key="compare_b")
if mode == "against the champion":
    if champion is None:
        st.warning("No champion is promoted yet.")
        st.stop()
    a_id = champion.model_version_id
    names.setdefault(a_id, f"model {a_id}")
else:
    a_id = st.selectbox("Baseline", ids, index=min(1, len(ids) - 1), format_func=names.get,
                        key="compare_a")
a_label, b_label = f"A: {names[a_id]}", f"B: {names[b_id]}"
a = store.read(lambda s: list_eval_results(s, model_version_id=a_id))
b = store.read(lambda s: list_eval_results(s, model_version_id=b_id))
rows = comparison_rows(a, b, a_label=a_label, b_label=b_label)
st.dataframe(rows, hide_index=True, width="stretch")
quality = [r for r in rows if r["suite"] != "latency"]
if quality:
    st.altair_chart(charts.grouped_bars(long_form(quality, (a_label, b_label)),
                                        title="Eval metrics"))
latency = latency_rows(a, a_label) + latency_rows(b, b_label)
if latency:
    st.altair_chart(charts.latency(latency))

config = store.settings()
base = mlflow_ui_base(config.mlflow_tracking_uri, config.mlflow_ui_url)
by_id = {m.model.id: m.model for m in listings}
for label, mid in ((a_label, a_id), (b_label, b_id)):
    model = by_id.get(mid)
    if model is None:
        continue
    run, reg = run_link(base, model.mlflow_run_id), model_link(base, model.registry_name,
                                                                 model.version)
    if run:
        st.markdown(f"{label}: [MLflow run]({run}) · [registered version]({reg})")
    else:
        st.caption(f"{label}: MLflow run `{model.mlflow_run_id}` (set HAT_MLFLOW_TRACKING_URI "
                   "to an MLflow server for links)")
