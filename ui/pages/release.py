"""Release: the A/B slot (A = champion, B = challenger, and the champion it replaced), the
gate results of each candidate with their verdict (passed / failed / inconclusive), promotion
and rollback through the same path as `hat promote` / `hat rollback` (MLflow aliases, then the
store's row, which the A/B gateway follows), the live experiment's split, exposures per arm
and SRM status, and the slot's audit log."""

import streamlit as st

from db.audit_repo import list_audit
from db.console_queries import models_by_ids, models_page
from db.experiment_data import live_experiment
from db.promotion import promote_slot, rollback_slot, slot_view
from db.release_repo import list_promotions
from hat_core.errors import HatError
from hat_core.release.rules import SLOT, gates_of, gates_verdict
from ui import store
from ui.flash import flash_and_rerun, show_flash
from ui.session import allowed, require_user
from ui.views.markdown import plain
from ui.views.paging import PAGE, cursor, pager

user = require_user("release.view")
st.title("Release")
st.caption(f"Slot `{SLOT}`: A is the champion (MLflow alias `champion`), B the challenger "
           "(alias `challenger`); `hat promote` and this page do the same thing.")
show_flash()

view = store.read(slot_view)
listed = store.read(lambda s: models_by_ids(s, ids=[m.id for m in (
    view.champion, view.challenger, view.previous) if m]))


def _label(model) -> str:
    listing = listed.get(model.id) if model else None
    trained = f", harness {listing.line} v{listing.number}" if listing and listing.number else ""
    return f"{model.registry_name} v{model.version}{trained}"


MARKS = {"passed": "✔ ", "failed": "✘ ", "inconclusive": "? "}


def _gates(model) -> None:
    gates = gates_of(model.gate_results)
    st.caption(f"gates {gates_verdict(model.gate_results)}: "
               + (" · ".join(MARKS[g.verdict] + g.name for g in gates) or "none recorded"))


a, b, previous = st.columns(3)
with a:
    st.subheader("A: champion")
    if view.champion is None:
        st.info("empty: nothing promoted yet")
    else:
        p = view.promotion
        st.markdown(f"**{_label(view.champion)}**")
        st.caption(f"since {p.created_at:%Y-%m-%d %H:%M} by {plain(p.actor)}"
                   + (" · OVERRIDE" if p.override else "") + (f" · {p.reason}" if p.reason else ""))
        _gates(view.champion)
with b:
    st.subheader("B: challenger")
    if view.challenger is None:
        st.info("none: no newer version passed its gates")
    else:
        st.markdown(f"**{_label(view.challenger)}**")
        _gates(view.challenger)
with previous:
    st.subheader("Previous champion")
    if view.previous is None:
        st.info("none: nothing to roll back to")
    else:
        st.markdown(f"**{_label(view.previous)}**")
        why = (st.text_input("Why roll back (recorded with the rollback)", key="rollback_reason")
               if allowed("release.rollback") else "")
        if allowed("release.rollback") and st.button("Roll back to it", key="rollback_ab"):
            try:
                if not why.strip():
                    raise HatError("give the reason for the rollback first")
                done = rollback_slot(store.sessions(), store.registry(),
                                     registry_name=view.champion.registry_name,
                                     actor=user.name, reason=why.strip())
            except HatError as exc:
                st.error(f"Rollback failed: {exc.report()}")
            else:
                flash_and_rerun(f"Rolled back slot {SLOT} to version {done.version} "
                                f"(was {done.previous_version}).")

if st.button("Show the MLflow aliases", key="show_aliases") and view.champion is not None:
    try:
        registry = store.registry()
        registry.check()
        st.json(registry.aliases(view.champion.registry_name))
    except HatError as exc:
        st.warning(exc.report())

st.markdown("#### Candidates and their gates")
candidates = store.read(lambda s: models_page(s, before_id=cursor("candidates"), limit=PAGE))
st.dataframe([{"model": f"{c.model.registry_name} v{c.model.version}"
                        + (f", harness {c.line} v{c.number}" if c.number else ""),
               "id": c.model.id,
               "gates": gates_verdict(c.model.gate_results),
               **{g.name: MARKS[g.verdict] + g.detail for g in gates_of(c.model.gate_results)},
               "registered": f"{c.model.created_at:%Y-%m-%d %H:%M}"} for c in candidates],
             hide_index=True, width="stretch")
pager("candidates", last_id=candidates[-1].model.id if candidates else None,
      full=len(candidates) == PAGE)

if allowed("release.promote") and candidates:
    st.markdown(f"#### Promote to champion (slot {SLOT})")
    by_id = {c.model.id: c for c in candidates}
    with st.form("promote"):
        chosen = st.selectbox("Model version", list(by_id), key="promote_model",
                              format_func=lambda i: f"{by_id[i].model.registry_name} "
                                                    f"v{by_id[i].model.version}"
                              + (f", harness {by_id[i].line} v{by_id[i].number}"
                                 if by_id[i].number else ""))
        reason = st.text_input("Override reason (admins, only when gates failed or were "
                               "inconclusive)",
                               key="promote_reason", disabled=not allowed("release.override"))
        go = st.form_submit_button("Promote", type="primary", key="promote_submit")
    if go:
        model = by_id[chosen].model
        try:
            done = promote_slot(store.sessions(), store.registry(),
                                registry_name=model.registry_name, version=model.version,
                                actor=user.name, override_reason=reason or "")
        except HatError as exc:
            st.error(f"Promotion refused: {exc.report()}")
        else:
            what = "Promoted" if done.changed else "Already the champion:"
            flash_and_rerun(f"{what} {model.registry_name} v{model.version} to champion "
                            f"(slot {SLOT})" + (" (override)" if done.promotion.override else "")
                            + (f"; previous champion v{done.previous_version}"
                               if done.previous_version else "") + ".")
elif not allowed("release.promote"):
    st.info(f"A {user.role} can read the release state; operators and admins promote.")

st.markdown("#### Slot history and audit log")
history = store.read(lambda s: list_promotions(s, slot=SLOT, limit=50))
st.dataframe([{"id": p.id, "model version id": p.model_version_id,
               "replaced": p.previous_model_version_id, "actor": p.actor, "reason": p.reason,
               "override": p.override, "at": f"{p.created_at:%Y-%m-%d %H:%M}"}
              for p in history], hide_index=True, width="stretch")
audit = store.read(lambda s: list_audit(s, entity="slot", entity_id=SLOT, limit=50))
st.dataframe([{"at": f"{e.created_at:%Y-%m-%d %H:%M}", "actor": e.actor, "action": e.action,
               "before": e.before, "after": e.after} for e in audit],
             hide_index=True, width="stretch")

st.markdown("#### Live A/B experiment")
live = store.read(lambda s: live_experiment(s, slot=SLOT))
if live is None:
    st.info("No experiment yet: `hat gateway` (or `hat serve`) starts one, or "
            "`hat ab experiment create NAME --split S`.")
else:
    e = live.experiment
    st.caption(f"{plain(e.name)} (id {e.id}): control serves A, treatment serves B; split "
               f"{1 - e.treatment_share:.0%} / {e.treatment_share:.0%}. A promotion or "
               "rollback here reaches the gateway within seconds.")
    st.dataframe([{"arm": c.arm, "users": c.users, "requests": c.requests,
                   "failed requests": c.errors} for c in live.counts],
                 hide_index=True, width="stretch")
    if live.srm is None:
        st.caption("SRM: not yet (both arms need users)")
    elif live.srm.mismatch:
        st.error(f"Sample ratio mismatch: p = {live.srm.p_value:.2g} (control share "
                 f"{live.srm.observed_control_share:.3f}, expected "
                 f"{live.srm.expected_control_share:.3f}); no lift is trustworthy.")
    else:
        st.caption(f"SRM ok: p = {live.srm.p_value:.2g}. The analysis: "
                   f"`hat ab analyze --experiment {e.id}`.")
