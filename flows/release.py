"""Promotion and rollback of registered checkpoints: MLflow aliases plus the store's record.

`promote_version` gives a registered version the `champion` alias (the A slot) and the old
champion `previous-champion`, and records the promotion (gate snapshot, audit entry) in the
store. A version that failed its gates is refused unless an admin gives an override reason.
`rollback_slot` swaps back to the version the current champion replaced.

The store is the truth and its write is the commit point: aliases are derived from the
store's current promotion and set first, then the promotion row is written. A retry after a
crash between the two sets the same aliases again and writes the row, so both operations are
safe to repeat; repeating a finished promotion changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from db.engine import in_transaction
from db.flow_repo import find_model_version
from db.release_repo import current_promotion, get_model_version, promote
from db.users_repo import get_user
from db.values import ModelVersion, Promotion
from flows.tracking import CHALLENGER, CHAMPION, PREVIOUS, Tracking
from hat_core.errors import HatError, NotFoundError, Problem

OPERATOR_ROLES = ("operator", "admin")


class ReleaseRefused(HatError):
    """A promotion or rollback the rules do not allow (gates, role, nothing to restore)."""


@dataclass(frozen=True)
class ReleaseResult:
    """The promotion now recorded for the slot and whether this call changed anything."""

    promotion: Promotion
    version: str
    previous_version: str | None
    changed: bool


def promote_version(
    sessions: sessionmaker[Session],
    tracking: Tracking,
    *,
    registry_name: str,
    version: str,
    actor: str,
    slot: str = "ab",
    override_reason: str = "",
) -> ReleaseResult:
    """Make `version` the champion of `slot` (see the module docstring for the rules)."""
    with sessions() as s:
        role = _role(s, actor)
        target = _stored(s, registry_name, version)
        current = current_promotion(s, slot=slot)
        previous = _version_of(s, current.model_version_id) if current else None
    gates_passed = bool(target.gate_results.get("passed"))
    _check_allowed(target, gates_passed, role, override_reason)
    if current is not None and current.model_version_id == target.id:
        _set_aliases(tracking, registry_name, target.version,
                     _version_str(sessions, current.previous_model_version_id))
        return ReleaseResult(current, target.version, None, False)
    _set_aliases(tracking, registry_name, target.version, previous)
    if tracking.alias_version(registry_name, CHALLENGER) == target.version:
        tracking.delete_alias(registry_name, CHALLENGER)
    override = not gates_passed
    row = in_transaction(sessions, lambda s: promote(
        s, slot=slot, model_version_id=target.id, actor=actor, reason=override_reason,
        gate_snapshot=target.gate_results, override=override))
    return ReleaseResult(row, target.version, previous, True)


def rollback_slot(
    sessions: sessionmaker[Session],
    tracking: Tracking,
    *,
    registry_name: str,
    actor: str,
    slot: str = "ab",
    reason: str = "",
) -> ReleaseResult:
    """Give the champion alias back to the version the current champion replaced."""
    with sessions() as s:
        _role(s, actor)
        current = current_promotion(s, slot=slot)
        if current is None or current.previous_model_version_id is None:
            raise ReleaseRefused(f"slot {slot!r} has no previous champion to roll back to")
        back = get_model_version(s, model_version_id=current.previous_model_version_id)
        now = get_model_version(s, model_version_id=current.model_version_id)
    _set_aliases(tracking, registry_name, back.version, now.version)
    why = reason or f"rollback from version {now.version}"
    row = in_transaction(sessions, lambda s: promote(
        s, slot=slot, model_version_id=back.id, actor=actor, reason=why,
        gate_snapshot=back.gate_results, override=False))
    return ReleaseResult(row, back.version, now.version, True)


def _set_aliases(tracking: Tracking, name: str, champion: str, previous: str | None) -> None:
    tracking.set_alias(name, CHAMPION, champion)
    if previous is not None and previous != champion:
        tracking.set_alias(name, PREVIOUS, previous)


def _role(session: Session, actor: str) -> str:
    user = get_user(session, name=actor)
    if user is None or user.role not in OPERATOR_ROLES:
        held = f"role {user.role}" if user else "no user record"
        raise ReleaseRefused(
            f"{actor!r} may not promote or roll back ({held})",
            [Problem("actor", f"needs a user with role {' or '.join(OPERATOR_ROLES)}; "
                              f"add one with `hat user add NAME --role operator`")])
    return user.role


def _stored(session: Session, registry_name: str, version: str) -> ModelVersion:
    found = find_model_version(session, registry_name=registry_name, version=str(version))
    if found is None:
        raise NotFoundError(f"model version {registry_name}/{version} is not in the store")
    return found


def _check_allowed(target: ModelVersion, passed: bool, role: str, reason: str) -> None:
    if passed:
        return
    failed = [name for name, g in target.gate_results.get("gates", {}).items()
              if not g.get("passed")]
    problems = [Problem(f"gates.{n}", target.gate_results["gates"][n].get("reason", ""))
                for n in failed]
    if not reason.strip():
        raise ReleaseRefused(
            f"version {target.version} failed its gates ({', '.join(failed) or 'none recorded'});"
            " an admin may override with --override-reason", problems)
    if role != "admin":
        raise ReleaseRefused(f"only an admin may override failed gates (you are {role})",
                             problems)


def _version_of(session: Session, model_version_id: int) -> str:
    return get_model_version(session, model_version_id=model_version_id).version


def _version_str(sessions: sessionmaker[Session], model_version_id: int | None) -> str | None:
    if model_version_id is None:
        return None
    with sessions() as s:
        return _version_of(s, model_version_id)

