"""Release: the A/B slot (champion vs challenger), the gate results of each candidate,
promotion (reviewers cannot; operators when the gates pass; admins override with a reason),
rollback, and the slot history."""

import streamlit as st

from db.console_queries import models_by_ids, models_page
from db.errors import StoreError
from db.release_repo import current_promotion, list_promotions
from ui import store
from ui.auth import PermissionDenied
from ui.flash import flash_and_rerun, show_flash
from ui.paging import PAGE, cursor, pager
from ui.release_rules import (
    SLOTS,
    gates_of,
    gates_pass,
    promote_checked,
    rollback_checked,
    update_mlflow_alias,
)
from ui.session import allowed, require_user

user = require_user("release.view")
st.title("Release")
show_flash()


def _label(listing) -> str:
    m = listing.model
    trained = f", harness {listing.line} v{listing.number}" if listing.number else ""
    return f"{m.registry_name} v{m.version}{trained}"


holders = {slot: store.read(lambda s, slot=slot: current_promotion(s, slot=slot))
           for slot in SLOTS}
held = store.read(lambda s: models_by_ids(
    s, ids=[p.model_version_id for p in holders.values() if p]))
for column, slot in zip(st.columns(len(SLOTS)), SLOTS, strict=True):
    with column:
        st.subheader(slot.capitalize())
        promotion = holders[slot]
        if promotion is None:
            st.info("empty")
            continue
        listing = held[promotion.model_version_id]
        st.markdown(f"**{_label(listing)}**")
        st.caption(f"since {promotion.created_at:%Y-%m-%d %H:%M} by {promotion.actor}"
                   + (" · OVERRIDE" if promotion.override else "")
                   + (f" · {promotion.reason}" if promotion.reason else ""))
        if allowed("release.rollback") and promotion.previous_model_version_id:
            if st.button(f"Roll back {slot}", key=f"rollback_{slot}"):
                try:
                    back = store.write(lambda s, slot=slot: rollback_checked(
                        s, user=user, slot=slot, reason="console rollback"))
                except (PermissionDenied, StoreError) as exc:
                    st.error(str(exc))
                else:
                    flash_and_rerun(f"Rolled back {slot} to model version id "
                                    f"{back.model_version_id}.")

st.markdown("#### Candidates and their gates")
candidates = store.read(lambda s: models_page(s, before_id=cursor("candidates"), limit=PAGE))
st.dataframe([{"model": _label(c), "id": c.model.id,
               "gates": "pass" if gates_pass(c.model.gate_results) else "FAIL",
               **{g.name: ("✔ " if g.passed else "✘ ") + g.detail
                  for g in gates_of(c.model.gate_results)},
               "registered": f"{c.model.created_at:%Y-%m-%d %H:%M}"} for c in candidates],
             hide_index=True, width="stretch")
pager("candidates", last_id=candidates[-1].model.id if candidates else None,
      full=len(candidates) == PAGE)

if allowed("release.promote") and candidates:
    st.markdown("#### Promote")
    by_id = {c.model.id: c for c in candidates}
    with st.form("promote"):
        chosen = st.selectbox("Model version", list(by_id), key="promote_model",
                              format_func=lambda i: _label(by_id[i]))
        slot = st.selectbox("Slot", SLOTS[::-1], key="promote_slot")
        reason = st.text_input("Override reason (admins, only when gates failed)",
                               key="promote_reason", disabled=not allowed("release.override"))
        go = st.form_submit_button("Promote", type="primary", key="promote_submit")
    if go:
        try:
            done = store.write(lambda s: promote_checked(
                s, user=user, model_version_id=chosen, slot=slot, override_reason=reason or ""))
        except (PermissionDenied, StoreError) as exc:
            st.error(f"Promotion refused: {exc}")
        else:
            alias = update_mlflow_alias(by_id[chosen].model, slot)
            flash_and_rerun(f"Promoted {_label(by_id[chosen])} to {slot}"
                            + (" (override)" if done.override else "") + f". {alias}")
elif not allowed("release.promote"):
    st.info(f"A {user.role} can read the release state; operators and admins promote.")

st.markdown("#### Slot history")
history = store.read(lambda s: list_promotions(s, limit=50))
st.dataframe([{"id": p.id, "slot": p.slot, "model version id": p.model_version_id,
               "replaced": p.previous_model_version_id, "actor": p.actor, "reason": p.reason,
               "override": p.override, "at": f"{p.created_at:%Y-%m-%d %H:%M}"}
              for p in history], hide_index=True, width="stretch")
