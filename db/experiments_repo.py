"""A/B experiments of a serving slot: a name, the salt of the sticky assignment, the split.

    exp = create_experiment(s, name="wk49", treatment_share=0.2, actor="ann")
    find_experiment(s, ref="wk49")  # or "3": by name, else by id
"""

from __future__ import annotations

import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.errors import StoreError
from db.models import AbExperimentRow, utcnow
from db.rows import snapshot, to_value
from db.values import AbExperiment
from hat_core.errors import NotFoundError
from hat_core.serving.assignment import Experiment


def create_experiment(session: Session, *, name: str, treatment_share: float, actor: str,
                      slot: str = "ab", salt: str | None = None) -> AbExperiment:
    """A new experiment (a random salt unless given); `StoreError` when the name is taken."""
    name = name.strip()
    if not name or name.isdigit():
        raise StoreError(f"experiment name {name!r}: a name with a letter (ids are numbers)")
    Experiment(0, name, "x", treatment_share)  # the split's check, before any write
    if session.scalars(select(AbExperimentRow).where(AbExperimentRow.name == name)).first():
        raise StoreError(f"an experiment named {name!r} exists already")
    row = AbExperimentRow(name=name, slot=slot, salt=salt or secrets.token_hex(8),
                          treatment_share=float(treatment_share), created_by=actor,
                          created_at=utcnow())
    session.add(row)
    session.flush()
    record_audit(session, actor=actor, action="ab_experiment.create", entity="ab_experiment",
                 entity_id=row.id, after=snapshot(row, "name", "slot", "treatment_share"))
    return to_value(AbExperiment, row)


def find_experiment(session: Session, *, ref: str | int) -> AbExperiment:
    """The experiment named `ref`, else the one whose id is `ref`; `NotFoundError` lists
    the known names."""
    text = str(ref).strip()
    row = session.scalars(select(AbExperimentRow).where(AbExperimentRow.name == text)).first()
    if row is None and text.isdigit():
        row = session.get(AbExperimentRow, int(text))
    if row is None:
        known = ", ".join(e.name for e in list_experiments(session)) or "none yet"
        raise NotFoundError(f"no A/B experiment {text!r} (known: {known}; create one with "
                            "`hat ab experiment create NAME`)")
    return to_value(AbExperiment, row)


def list_experiments(session: Session, *, limit: int = 100) -> list[AbExperiment]:
    """Newest experiments first."""
    query = select(AbExperimentRow).order_by(AbExperimentRow.id.desc()).limit(limit)
    return [to_value(AbExperiment, r) for r in session.scalars(query)]
