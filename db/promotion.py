"""The one release path: promote into the A/B slot or roll it back (aliases, then the row).

Promote a registered model version into slot `ab`, or roll the slot back, moving the MLflow
registry aliases and recording the promotion in the store.

`hat promote` / `hat rollback`, the demo and the console's release page call these two functions;
`slot_view` is what the slot holds now (champion, challenger, previous champion). The rules are
`hat_core.release.rules` (roles from the store's users, gates from `ModelVersion.gate_results`); the
aliases are `hat_core.release.registry.ModelRegistry`.

The store is the truth and its promotion row is the commit point: the registry is checked
and the aliases are set first, then the row is written. MLflow down or refusing: nothing is
written. A crash between the two leaves the store unchanged, and a retry sets the same aliases
and writes the row; repeating a finished promotion changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from db.engine import in_transaction
from db.flow_repo import find_model_version
from db.release_repo import current_promotion, get_model_version, list_model_versions, promote
from db.users_repo import get_user
from db.values import ModelVersion, Promotion
from hat_core.errors import NotFoundError
from hat_core.release.registry import ModelRegistry
from hat_core.release.rules import (
    SLOT,
    Candidate,
    challenger_of,
    check_actor,
    check_promotion,
    rollback_target,
)

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
    return SlotView(current, _model(session, champion_id), _model(session, challenger_id),
                    _model(session, previous_id))


@dataclass(frozen=True)
class ReleaseResult:
    """The promotion now recorded for the slot and whether this call changed anything."""

    promotion: Promotion
    version: str
    previous_version: str | None
    changed: bool


def promote_slot(
    sessions: sessionmaker[Session],
    registry: ModelRegistry,
    *,
    registry_name: str,
    version: str,
    actor: str,
    slot: str = SLOT,
    override_reason: str = "",
) -> ReleaseResult:
    """Make `version` the champion of `slot` if the rules allow `actor` to (else
    `hat_core.release.rules.ReleaseRefused`); `RegistryUnavailable` leaves the store unchanged."""
    with sessions() as s:
        role = check_actor(actor, _role(s, actor))
        target = _stored(s, registry_name, version)
        current = current_promotion(s, slot=slot)
        held = _version(s, current.model_version_id) if current else None
        replaced = _version(s, current.previous_model_version_id) if current else None
    override = check_promotion(role, version=target.version, gate_results=target.gate_results,
                               override_reason=override_reason)
    registry.check()
    if current is not None and current.model_version_id == target.id:
        registry.move_champion(registry_name, target.version, replaced)
        return ReleaseResult(current, target.version, replaced, False)
    registry.move_champion(registry_name, target.version, held)
    reason = override_reason.strip() or "gates passed"
    row = in_transaction(sessions, lambda s: promote(
        s, slot=slot, model_version_id=target.id, actor=actor, reason=reason,
        gate_snapshot=target.gate_results, override=override))
    return ReleaseResult(row, target.version, held, True)


def rollback_slot(
    sessions: sessionmaker[Session],
    registry: ModelRegistry,
    *,
    registry_name: str,
    actor: str,
    slot: str = SLOT,
    reason: str = "",
) -> ReleaseResult:
    """Give the champion back to the version the current champion replaced (a new, audited
    promotion row); `ReleaseRefused` when there is none."""
    with sessions() as s:
        check_actor(actor, _role(s, actor))
        current = current_promotion(s, slot=slot)
        back_id = rollback_target(current and current.model_version_id,
                                  current and current.previous_model_version_id, slot)
        back = get_model_version(s, model_version_id=back_id)
        now = get_model_version(s, model_version_id=current.model_version_id)
    registry.check()
    registry.move_champion(registry_name, back.version, now.version)
    why = f"rollback from version {now.version}" + (f": {reason.strip()}" if reason.strip()
                                                    else "")
    row = in_transaction(sessions, lambda s: promote(
        s, slot=slot, model_version_id=back.id, actor=actor, reason=why,
        gate_snapshot=back.gate_results, override=False))
    return ReleaseResult(row, back.version, now.version, True)


def _role(session: Session, actor: str) -> str | None:
    user = get_user(session, name=actor)
    return user.role if user else None


def _stored(session: Session, registry_name: str, version: str) -> ModelVersion:
    found = find_model_version(session, registry_name=registry_name, version=str(version))
    if found is None:
        raise NotFoundError(f"model version {registry_name}/{version} is not in the store")
    return found


def _model(session: Session, model_version_id: int | None) -> ModelVersion | None:
    if model_version_id is None:
        return None
    return get_model_version(session, model_version_id=model_version_id)


def _version(session: Session, model_version_id: int | None) -> str | None:
    if model_version_id is None:
        return None
    return get_model_version(session, model_version_id=model_version_id).version
