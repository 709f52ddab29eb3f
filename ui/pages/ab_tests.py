"""A/B tests: upload per-user online metrics (CSV or Parquet), pick metrics and settings, read
the lift table (Welch and bootstrap CIs, raw and adjusted p, CUPED, day stability), the SRM
check and the interval plots; save the analysis (operators); browse saved analyses."""

import streamlit as st

from db.ab_repo import list_ab_analyses
from db.errors import StoreError
from hat_core.errors import ConfigError
from hat_core.evidence.options import BOOTSTRAP_METHODS, CORRECTIONS
from ui import store
from ui.auth import PermissionDenied
from ui.flash import flash_and_rerun, show_flash
from ui.session import allowed, require_user
from ui.views.ab import (
    SUFFIXES,
    analyze_upload,
    day_points,
    interval_chart,
    interval_points,
    lift_rows,
    problems_of,
    save_upload,
    srm_line,
    upload_columns,
)


def show_result(result: dict) -> None:
    mismatch, text = srm_line(result)
    (st.error if mismatch else st.info)(
        ("Sample ratio mismatch: do not read the lifts. " if mismatch else "") + text)
    s = result["settings"]
    st.caption(f"{result['treatment']} against {result['control']}; alpha {s['alpha']}, "
               f"correction {s['correction']}, bootstrap {s['bootstrap']} "
               f"({s['bootstrap_method']}), CUPED {'on' if s['cuped'] else 'off'}, "
               f"{len(result['days'])} day(s)")
    st.dataframe(lift_rows(result), hide_index=True, width="stretch")
    points = interval_points(result)
    if points:
        st.altair_chart(interval_chart(points, title="Relative lift, 95% CI"))
    days = day_points(result)
    if days:
        st.altair_chart(interval_chart(days, row="day", title="Lift per day"))


user = require_user("evidence.view")
st.title("A/B tests")
show_flash()
tab_new, tab_saved = st.tabs(["Analyse a file", "Saved analyses"])

with tab_new:
    upload = st.file_uploader("Per-user metrics: user_id, arm, day, metrics "
                              "(`<metric>_pre` = CUPED covariate)", type=list(SUFFIXES),
                              key="ab_file")
    if upload is not None:
        raw = upload.getvalue()
        try:
            columns, arms = upload_columns(upload.name, raw)
        except ConfigError as exc:
            st.error(exc.report())
            st.stop()
        c1, c2, c3 = st.columns(3)
        control = c1.selectbox("Control arm", arms or ["control"], key="ab_control",
                               index=arms.index("control") if "control" in arms else 0)
        treatment = c2.selectbox("Treatment arm", arms or ["treatment"], key="ab_treatment",
                                 index=arms.index("treatment") if "treatment" in arms else
                                 min(1, max(len(arms) - 1, 0)))
        split = c3.number_input("Expected control share", 0.01, 0.99, 0.5, step=0.05,
                                key="ab_split")
        metrics = st.multiselect("Metrics (none: every metric column)", columns,
                                 key="ab_metrics")
        c4, c5, c6, c7 = st.columns(4)
        correction = c4.selectbox("Correction", CORRECTIONS, key="ab_correction")
        boot = c5.number_input("Bootstrap resamples (0: off)", 0, 10000, 1000, step=100,
                               key="ab_boot")
        method = c6.selectbox("Bootstrap interval", BOOTSTRAP_METHODS, key="ab_method")
        cuped = c7.checkbox("CUPED (uses `<metric>_pre`)", True, key="ab_cuped")
        if st.button("Analyse", type="primary", key="ab_run"):
            from hat_core.evidence.ab import AbConfig

            try:
                config = AbConfig(expected_split=float(split), bootstrap=int(boot),
                                  bootstrap_method=method, correction=correction, cuped=cuped)
                st.session_state["ab_upload"] = analyze_upload(
                    upload.name, raw, control=control, treatment=treatment, metrics=metrics,
                    config=config)
            except ConfigError as exc:
                st.session_state.pop("ab_upload", None)
                st.error(str(exc) + "\n\n" + "\n".join(f"- {p}" for p in problems_of(exc)))
        done = st.session_state.get("ab_upload")
        if done is not None and done.filename == upload.name:
            show_result(done.result)
            if allowed("evidence.save"):
                with st.form("ab_save"):
                    name = st.text_input("Name", value=done.filename, key="ab_name")
                    saved = st.form_submit_button("Save analysis", key="ab_save_button")
                if saved:
                    try:
                        row = store.write(lambda s: save_upload(s, user=user, upload=done,
                                                                name=name))
                    except (PermissionDenied, StoreError) as exc:
                        st.error(str(exc))
                    else:
                        st.session_state.pop("ab_upload", None)
                        flash_and_rerun(f"Saved A/B analysis {row.id} ({row.name}).")
            else:
                st.caption("Operators and admins can save an analysis.")

with tab_saved:
    saved_list = store.read(lambda s: list_ab_analyses(s, limit=50))
    if not saved_list:
        st.caption("No saved analyses yet (`hat ab analyze FILE --save`, or save one here).")
    else:
        st.dataframe([{"id": a.id, "name": a.name, "file": a.source_name,
                       "sha256": a.source_sha256[:12], "metrics": ", ".join(a.metrics),
                       "users": a.n_users, "SRM ok": a.trustworthy, "by": a.created_by,
                       "when": f"{a.created_at:%Y-%m-%d %H:%M}"} for a in saved_list],
                     hide_index=True, width="stretch")
        by_id = {a.id: a for a in saved_list}
        pick = st.selectbox("Open analysis", list(by_id), key="ab_open",
                            format_func=lambda i: f"#{i} {by_id[i].name}")
        show_result(by_id[pick].result)
