"""Compare two checkpoints (model versions), or one against the champion: the eval results
side by side with deltas, as a table and charts, with links into the MLflow UI; when both
checkpoints' evaluations kept their per-case rows, each rate with its Wilson interval and the
paired tests. Two MLflow evaluation runs compare the same way, and a `repro aggregate` run
shows the reproduction table's multi-seed aggregates (`ui.views.case_stats`)."""

import streamlit as st

from db.console_queries import models_page
from db.release_repo import current_promotion, list_eval_results
from hat_core.errors import HatError
from hat_core.release.rules import SLOT
from ui import store
from ui.session import require_user
from ui.views import charts
from ui.views.case_stats import ALPHA, MIN_CASES, aggregate_rows, case_stats, cases_ref, load_rows
from ui.views.mlflow_links import mlflow_ui_base, model_link, run_link
from ui.views.runs import comparison_rows, latency_rows, long_form

CHAMPION, TWO, RUNS, REPRO = ("against the champion", "two checkpoints",
                               "two MLflow evaluation runs", "a repro aggregate run")


def decision_rule() -> tuple[int, float]:
    """The paired verdicts' least number of cases and alpha (the release gates' defaults)."""
    left, right = st.columns(2)
    min_cases = left.number_input("Verdict: least paired cases", 1, 100000, MIN_CASES, step=1,
                                  key="compare_min_cases",
                                  help="Fewer paired cases than this: inconclusive, as in "
                                       "the release gates")
    alpha = right.number_input("Verdict: alpha", 0.001, 0.5, ALPHA, step=0.01, format="%.3f",
                               key="compare_alpha",
                               help="McNemar's p at or above this: inconclusive")
    return int(min_cases), float(alpha)


def show_case_stats(uri: str, ref_a: str, ref_b: str, a_label: str, b_label: str) -> None:
    """Rates with Wilson intervals and paired tests of two runs' case rows."""
    try:
        rows_a, rows_b = load_rows(uri, ref_a), load_rows(uri, ref_b)
    except HatError as exc:
        st.error(str(exc))
        return
    min_cases, alpha = decision_rule()
    rates, paired, notes = case_stats(rows_a, rows_b, a_label=a_label, b_label=b_label,
                                      min_cases=min_cases, alpha=alpha)
    st.subheader("Per-case rates (Wilson 95% intervals)")
    if not rates:
        st.info("The two runs share no suite with per-case outcomes.")
        return
    st.dataframe(rates, hide_index=True, width="stretch")
    st.subheader("Paired on the same cases (b − a, Bonett-Price 95%, McNemar exact p)")
    if paired:
        st.dataframe(paired, hide_index=True, width="stretch")
    for note in notes:
        st.caption(note)


require_user("runs.view")
st.title("Compare checkpoints")
mode = st.radio("Compare", [CHAMPION, TWO, RUNS, REPRO], horizontal=True, key="compare_mode")
uri = store.settings().resolved_mlflow_uri()
if mode == RUNS:
    st.caption("An evaluation run's id (its only `*.cases.jsonl`), `RUN_ID:PATH` for one of "
               "several, or an eval result's `runs:/RUN_ID/PATH`.")
    ref_a = st.text_input("Run A", key="compare_run_a")
    ref_b = st.text_input("Run B", key="compare_run_b")
    if ref_a.strip() and ref_b.strip():
        show_case_stats(uri, ref_a, ref_b, f"A: {ref_a.strip()}", f"B: {ref_b.strip()}")
    st.stop()
if mode == REPRO:
    from hat_core.repro.config import ARM_LABELS
    from hat_core.repro.tracking import aggregate_runs, read_aggregates

    found = aggregate_runs(uri)
    if not found:
        st.info("No `repro aggregate` run in MLflow yet (`hat repro` logs one; `hat repro "
                "--merge ... --tracking-uri URI` for merged seeds).")
        st.stop()
    labels = {r["run_id"]: f"{r['name']} (seeds {r['seeds']}, run {r['run_id'][:8]})"
              for r in found}
    run_id = st.selectbox("Run", list(labels), format_func=labels.get, key="compare_repro")
    try:
        agg = read_aggregates(uri, run_id) or {}
    except HatError as exc:
        st.error(str(exc))
        st.stop()
    min_cases, alpha = decision_rule()
    pooled, tests = aggregate_rows(agg, ARM_LABELS, min_cases=min_cases, alpha=alpha)
    st.subheader("Pooled rates over seeds (Wilson 95%) beside mean ± std")
    st.dataframe(pooled, hide_index=True, width="stretch")
    st.subheader("Paired tests between arms, pairs pooled over seeds")
    st.dataframe(tests, hide_index=True, width="stretch")
    st.stop()
listings = store.read(lambda s: models_page(s, limit=200))
if not listings:
    st.info("No model version is registered yet.")
    st.stop()
champion = store.read(lambda s: current_promotion(s, slot=SLOT))
names = {m.model.id: f"{m.model.registry_name} v{m.model.version}"
         + (f" (harness {m.line} v{m.number})" if m.number else "") for m in listings}
ids = list(names)
b_id = st.selectbox("Checkpoint", ids, format_func=names.get, key="compare_b")
if mode == CHAMPION:
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

ref_a, ref_b = cases_ref(a), cases_ref(b)
if ref_a and ref_b:
    show_case_stats(uri, ref_a, ref_b, a_label, b_label)
else:
    st.caption("Per-case intervals and paired tests need both checkpoints' case rows "
               "(an eval result's cases URI); "
               + ("neither has one." if not (ref_a or ref_b) else
                  f"{'A' if not ref_a else 'B'} has none."))

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
