"""The audit log: every change made through the store, newest first, by entity kind."""

import streamlit as st

from db.console_queries import audit_page
from ui import store
from ui.session import require_user
from ui.views.paging import PAGE, cursor, pager, reset

require_user("audit.view")
st.title("Audit log")
ENTITIES = ["any", "slot", "harness_version", "bad_case", "retrain_job", "model_version",
            "user", "login", "stage_run", "eval_result"]
entity = st.selectbox("Entity", ENTITIES, key="audit_entity", on_change=reset, args=("audit",))
entries = store.read(lambda s: audit_page(s, entity=None if entity == "any" else entity,
                                          before_id=cursor("audit"), limit=PAGE))
st.dataframe([{"id": e.id, "at": f"{e.created_at:%Y-%m-%d %H:%M:%S}", "actor": e.actor,
               "action": e.action, "entity": e.entity, "entity id": e.entity_id,
               "before": e.before, "after": e.after} for e in entries],
             hide_index=True, width="stretch")
pager("audit", last_id=entries[-1].id if entries else None, full=len(entries) == PAGE)
