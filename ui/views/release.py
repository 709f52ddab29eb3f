"""What the release page shows and does: the A/B slot and the one release path.

The rules (who may promote, gates, rollback) are `hat_core.release.rules`; promoting and rolling
back are `db.promotion.promote_slot` / `rollback_slot`, the functions `hat promote` and
`hat rollback` use: they move the MLflow aliases (champion, previous-champion, challenger)
and then write the store's promotion row, so the console and the command line cannot drift.

    view = slot_view(session)                 # champion, challenger, previous champion (store)
    promote_model(sessions, registry_of(settings), user=user, model=m, override_reason="")
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from db.promotion import ReleaseResult, promote_slot, rollback_slot
from db.release_repo import current_promotion, get_model_version, list_model_versions
from db.values import ModelVersion, Promotion, User
from hat_core.release.registry import ModelRegistry
from hat_core.release.rules import (
    SLOT,
    Candidate,
    Gate,
    challenger_of,
    gates_of,
    gates_passed,
    promotion_decision,
)
from hat_core.settings import Settings

__all__ = ["SLOT", "Gate", "SlotView", "gates_of", "gates_passed", "promote_model",
           "promotion_decision", "registry_of", "rollback_model", "slot_view"]
CHALLENGER_SCAN = 200  # the challenger is among the newest registered versions


@dataclass(frozen=True)
class SlotView:
    """The A/B slot as the store has it: A (champion), B (challenger), the replaced champion."""

    promotion: Promotion | None
    champion: ModelVersion | None
    challenger: ModelVersion | None
    previous: ModelVersion | None


def slot_view(session: Session, *, slot: str = SLOT) -> SlotView:
    """The slot's current promotion and its models; the challenger by `challenger_of`."""
    current = current_promotion(session, slot=slot)
    champion_id = current.model_version_id if current else None
    previous_id = current.previous_model_version_id if current else None
    recent = list_model_versions(session, limit=CHALLENGER_SCAN)
    challenger_id = challenger_of([Candidate(m.id, m.gate_results) for m in recent],
                                  champion_id, previous_id)

    def model(model_version_id: int | None) -> ModelVersion | None:
        if model_version_id is None:
            return None
        return get_model_version(session, model_version_id=model_version_id)

    return SlotView(current, model(champion_id), model(challenger_id), model(previous_id))


def registry_of(settings: Settings) -> ModelRegistry:
    """The MLflow registry the flows use (`HAT_MLFLOW_TRACKING_URI`, else under `HAT_HOME`)."""
    return ModelRegistry(settings.resolved_mlflow_uri())


def promote_model(sessions: sessionmaker[Session], registry: ModelRegistry, *, user: User,
                  model: ModelVersion, override_reason: str = "") -> ReleaseResult:
    """`hat promote` for the logged-in user: the model becomes the champion of slot `ab`."""
    return promote_slot(sessions, registry, registry_name=model.registry_name,
                        version=model.version, actor=user.name,
                        override_reason=override_reason)


def rollback_model(sessions: sessionmaker[Session], registry: ModelRegistry, *, user: User,
                   champion: ModelVersion, reason: str = "") -> ReleaseResult:
    """`hat rollback` for the logged-in user: the replaced champion comes back."""
    return rollback_slot(sessions, registry, registry_name=champion.registry_name,
                         actor=user.name, reason=reason)
