"""Judge calibration: how well the judge agrees with humans (bad-case review labels, and votes
of closed pairwise reviews): agreement, Cohen's kappa overall and per label, the confusion
matrix, and the gate's verdict at the configured kappa threshold."""

import streamlit as st

from ui import store
from ui.session import require_user
from ui.views.judge import TITLES, calibrations, confusion_rows, label_rows, summary_row

require_user("evidence.view")
st.title("Judge calibration")
settings = store.settings()
min_kappa, min_n = settings.judge_min_kappa, settings.judge_min_items
st.caption(f"Gate: Cohen's kappa at least {min_kappa} on at least {min_n} items "
           "(`HAT_JUDGE_MIN_KAPPA`, `HAT_JUDGE_MIN_ITEMS`). A judge that fails it may not "
           "replace human review for that kind of verdict.")
results = store.read(lambda s: calibrations(s, min_kappa=min_kappa, min_n=min_n))
st.dataframe([summary_row(c) for c in results], hide_index=True, width="stretch")
for c in results:
    st.subheader(TITLES[c.source])
    if c.gate_ok:
        st.success(f"Gate passed: {c.gate_reason}")
    else:
        st.error(f"Gate refused: {c.gate_reason}")
    if c.calibration is None:
        continue
    st.dataframe(label_rows(c), hide_index=True, width="stretch")
    st.caption("Confusion matrix (rows: human label, columns: judge)")
    st.dataframe(confusion_rows(c), hide_index=True, width="stretch")
