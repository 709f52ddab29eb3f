"""Blind pairwise review: two systems' responses to the same scenarios shown left and right
in a random order, without labels; reviewers pick left, tie or right with a comment. Operators
create a review from a JSONL upload or from two evaluated checkpoints (their stored t1/t2
episodes) and close it; only a closed review is unblinded (win/tie/loss of A, win rate with a
Wilson CI, sign test, per-item votes)."""

import streamlit as st

from db.console_queries import models_page
from db.errors import StoreError
from db.eval_runs import evaluated_checkpoints
from db.pairwise_repo import (
    get_pairwise_review,
    list_blind_items,
    list_pairwise_reviews,
    list_votes,
    review_outcome,
)
from hat_core.config_file import decode_text
from hat_core.errors import HatError
from ui import store
from ui.auth import PermissionDenied
from ui.flash import flash_and_rerun, show_flash
from ui.session import allowed, require_user
from ui.views.pairwise import (
    CHOICE_LABELS,
    PRODUCTION,
    close_review,
    create_review,
    create_review_from_checkpoints,
    first_unvoted,
    item_rows,
    outcome_rows,
    parse_seed,
    review_rows,
    vote,
)


def new_review_form() -> None:
    source = st.radio("Items from", ["JSONL upload", "Evaluated checkpoints"], horizontal=True,
                      key="pw_source")
    if source == "JSONL upload":
        jsonl_form()
    else:
        checkpoints_form()


def jsonl_form() -> None:
    models = {f"{m.model.registry_name} v{m.model.version}": m.model.id
              for m in store.read(lambda s: models_page(s, limit=100))}
    choices = [*models, PRODUCTION]
    with st.form("pw_new", clear_on_submit=False):
        title = st.text_input("Title", key="pw_title")
        c1, c2 = st.columns(2)
        system_a = c1.selectbox("System A", choices, key="pw_a")
        system_b = c2.selectbox("System B", choices, index=len(choices) - 1, key="pw_b")
        upload = st.file_uploader("Items, JSONL: one {scenario_id, prompt, response_a, "
                                  "response_b[, judge: a|b|tie]} per line",
                                  type=["jsonl", "json", "txt"], key="pw_file")
        seed = st.text_input("Blinding seed (blank: random)", key="pw_seed")
        create = st.form_submit_button("Create review", key="pw_create")
    if not create:
        return
    if upload is None:
        st.error("Upload the items (JSONL) first.")
        return
    try:
        review = store.write(lambda s: create_review(
            s, user=user, title=title, system_a=system_a, system_b=system_b,
            jsonl=decode_text(upload.getvalue(), upload.name), source=upload.name,
            seed=parse_seed(seed), model_version_a_id=models.get(system_a),
            model_version_b_id=models.get(system_b)))
    except (PermissionDenied, HatError) as exc:
        st.error(exc.report() if isinstance(exc, HatError) else str(exc))
        return
    flash_and_rerun(f"Opened review #{review.id} with {review.n_items} items.")


def checkpoints_form() -> None:
    sources = {c.label: c.model_version_id
               for c in store.read(lambda s: evaluated_checkpoints(s, limit=100))}
    if not sources:
        st.info("No evaluated checkpoints yet: a retrain job's eval stage stores the cases of "
                "the checkpoint it trained and of the production baseline beside it.")
        return
    baseline = "production baseline (evaluated beside A)"
    with st.form("pw_runs_form", clear_on_submit=False):
        title = st.text_input("Title", key="pw_runs_title")
        c1, c2 = st.columns(2)
        system_a = c1.selectbox("System A (checkpoint)", list(sources), key="pw_runs_a")
        system_b = c2.selectbox("System B", [*sources, baseline], index=len(sources),
                                key="pw_runs_b")
        limit = st.number_input("Items (0: every case both played)", min_value=0, value=20,
                                step=1, key="pw_runs_limit")
        seed = st.text_input("Sample and blinding seed (blank: random)", key="pw_runs_seed")
        create = st.form_submit_button("Create review", key="pw_runs_create")
    if not create:
        return
    try:
        with st.spinner("Reading both evaluations from MLflow..."):
            review = store.write(lambda s: create_review_from_checkpoints(
                s, user=user, tracking_uri=store.settings().resolved_mlflow_uri(), title=title,
                checkpoint_a=sources[system_a], checkpoint_b=sources.get(system_b),
                limit=int(limit) or None, seed=parse_seed(seed)))
    except (PermissionDenied, HatError) as exc:
        st.error(exc.report() if isinstance(exc, HatError) else str(exc))
        return
    flash_and_rerun(f"Opened review #{review.id} with {review.n_items} items.")


def voting(review) -> None:
    items = store.read(lambda s: list_blind_items(s, review_id=review.id))
    mine = {v.item_id: v for v in store.read(lambda s: list_votes(
        s, review_id=review.id, reviewer=user.name))}
    st.caption(f"{review.n_items} items, {review.n_votes} vote(s) so far; you voted on "
               f"{len(mine)} of {len(items)}. The systems are hidden until the review closes.")
    by_id = {it.id: it for it in items}
    ids = list(by_id)
    box = f"pw_item_{review.id}"
    if st.session_state.pop("pw_advance", False):  # after a vote: the next unvoted item
        st.session_state[box] = ids[first_unvoted(ids, set(mine))]
    item_id = st.selectbox(
        "Item", ids, index=first_unvoted(ids, set(mine)), key=box,
        format_func=lambda i: f"{by_id[i].position + 1}. {by_id[i].scenario_id}"
                              + (" (voted)" if i in mine else ""))
    item = by_id[item_id]
    if item.prompt:
        st.markdown("**Prompt**")
        st.text(item.prompt)
    left, right = st.columns(2)
    with left.container(border=True):
        st.markdown("**Left**")
        st.text(item.response_left)
    with right.container(border=True):
        st.markdown("**Right**")
        st.text(item.response_right)
    if not allowed("pairwise.vote"):
        st.info("Viewers can read the items; reviewers vote.")
        return
    earlier = mine.get(item.id)
    with st.form(f"pw_vote_{item.id}"):
        choices = list(CHOICE_LABELS)
        choice = st.radio("Which response is better?", choices, horizontal=True,
                          index=choices.index(earlier.choice) if earlier else None,
                          format_func=CHOICE_LABELS.get, key=f"pw_choice_{item.id}")
        comment = st.text_area("Comment", value=earlier.comment if earlier else "",
                               key=f"pw_comment_{item.id}")
        cast = st.form_submit_button("Save vote", type="primary", key=f"pw_cast_{item.id}")
    if cast and choice is None:
        st.error("Pick left, tie or right first.")
    elif cast:
        try:
            store.write(lambda s: vote(s, user=user, item_id=item.id, choice=choice,
                                       comment=comment))
        except (PermissionDenied, StoreError) as exc:
            st.error(str(exc))
        else:
            st.session_state["pw_advance"] = True
            flash_and_rerun(f"Vote saved on item {item.position + 1}: "
                            f"{CHOICE_LABELS[choice]}.")


def closing(review) -> None:
    if not allowed("pairwise.manage"):
        return
    st.divider()
    sure = st.checkbox("Closing ends voting for everyone and unblinds the review",
                       key=f"pw_sure_{review.id}")
    if st.button("Close review", disabled=not sure, key=f"pw_close_{review.id}"):
        try:
            store.write(lambda s: close_review(s, user=user, review_id=review.id))
        except (PermissionDenied, StoreError) as exc:
            st.error(str(exc))
        else:
            flash_and_rerun(f"Review #{review.id} closed and unblinded.")


def unblinded(review) -> None:
    outcome = store.read(lambda s: review_outcome(s, review_id=review.id))
    st.subheader(f"A = {outcome.system_a} · B = {outcome.system_b}")
    st.caption(f"closed by {review.closed_by} at {review.closed_at:%Y-%m-%d %H:%M}; "
               f"blinding seed {outcome.seed}. Ties are left out of the win rate and the "
               "sign test; several reviewers on one item are not independent, so read the "
               "per-item row too.")
    st.dataframe(outcome_rows(outcome), hide_index=True, width="stretch")
    st.dataframe(item_rows(outcome), hide_index=True, width="stretch")


user = require_user("evidence.view")
st.title("Pairwise review")
show_flash()
# one view at a time, so an open review's page never lists the checkpoints at all
if allowed("pairwise.manage") and st.radio("View", ["Reviews", "New review"], horizontal=True,
                                           key="pw_mode") == "New review":
    new_review_form()
    st.stop()
reviews = store.read(lambda s: list_pairwise_reviews(s, limit=50))
if not reviews:
    st.caption("No pairwise reviews yet.")
    st.stop()
st.dataframe(review_rows(reviews), hide_index=True, width="stretch")
by_id = {r.id: r for r in reviews}
picked = st.selectbox("Open review", list(by_id), key="pw_review",
                      format_func=lambda i: f"#{i} {by_id[i].title} ({by_id[i].state})")
review = store.read(lambda s: get_pairwise_review(s, review_id=picked))
st.header(f"#{review.id} {review.title}")
if review.is_open:
    voting(review)
    closing(review)
else:
    unblinded(review)
