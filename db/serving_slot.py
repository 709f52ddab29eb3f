"""What each arm of an A/B slot serves, read from the store (the gateway polls this).

`slot_targets(session, slot="ab")` -> {"control": champion, "treatment": challenger}, each an
`ArmTarget` (registered name and version, the store's model version id, the harness version
its retrain job trained on) or None. The champion is the slot's current promotion and the
challenger is `db.promotion.slot_view`'s, so a promotion or rollback recorded by the CLI or
the console is what the gateway switches to.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.models import HarnessVersionRow, RetrainJob
from db.promotion import slot_view
from db.values import ModelVersion
from hat_core.serving.arms import ArmTarget
from hat_core.serving.assignment import CONTROL, TREATMENT


def slot_targets(session: Session, *, slot: str = "ab") -> dict[str, ArmTarget | None]:
    """The champion (control) and challenger (treatment) of `slot` as arm targets."""
    view = slot_view(session, slot=slot)
    return {CONTROL: _target(session, view.champion),
            TREATMENT: _target(session, view.challenger)}


def _target(session: Session, model: ModelVersion | None) -> ArmTarget | None:
    if model is None:
        return None
    harness = ""
    if model.job_id is not None:
        query = (select(HarnessVersionRow.number).join(
            RetrainJob, RetrainJob.harness_version_id == HarnessVersionRow.id)
            .where(RetrainJob.id == model.job_id))
        number = session.scalars(query).first()
        harness = "" if number is None else str(number)
    return ArmTarget(model.registry_name, model.version, model.id, harness)
