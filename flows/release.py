"""Promotion and rollback for the flows and `hat promote` / `hat rollback`: the one release
path of `db.promotion` with this service's MLflow store (`flows.tracking.Tracking`).

`promote_version` gives a registered version the `champion` alias (the A slot) and the old
champion `previous-champion`, removes `challenger` if it pointed at it, and records the
promotion (gate snapshot, audit entry) in the store; `rollback_slot` gives the champion back
to the version the current champion replaced. The rules are `hat_core.release.rules`: operators
when the gates passed, admins past failed gates with a reason, nobody else. The console calls
the same `db.promotion` functions, so both paths move the same aliases and rows.
"""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from db import promotion
from db.promotion import ReleaseResult
from flows.tracking import Tracking
from hat_core.release.rules import PROMOTER_ROLES, SLOT, ReleaseRefused

__all__ = ["OPERATOR_ROLES", "ReleaseRefused", "ReleaseResult", "promote_version",
           "rollback_slot"]
OPERATOR_ROLES = PROMOTER_ROLES


def promote_version(
    sessions: sessionmaker[Session],
    tracking: Tracking,
    *,
    registry_name: str,
    version: str,
    actor: str,
    slot: str = SLOT,
    override_reason: str = "",
) -> ReleaseResult:
    """Make `version` the champion of `slot` (`db.promotion.promote_slot`)."""
    return promotion.promote_slot(sessions, tracking, registry_name=registry_name,
                                  version=version, actor=actor, slot=slot,
                                  override_reason=override_reason)


def rollback_slot(
    sessions: sessionmaker[Session],
    tracking: Tracking,
    *,
    registry_name: str,
    actor: str,
    slot: str = SLOT,
    reason: str = "",
) -> ReleaseResult:
    """Give the champion back to the version the current champion replaced
    (`db.promotion.rollback_slot`)."""
    return promotion.rollback_slot(sessions, tracking, registry_name=registry_name,
                                   actor=actor, slot=slot, reason=reason)
