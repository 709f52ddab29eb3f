"""Release decisions: who may promote what into which slot, and rollback.

Slots: `champion` (serves production) and `challenger` (its A/B opponent). A reviewer or
viewer cannot promote; an operator can when every gate of the model version passed; an admin
can override failed gates with a reason (stored with the override flag; the store writes the
audit entry). A rollback puts the slot's previous model version back (a new promotion row,
audited). `update_mlflow_alias` is the one seam where the MLflow registry alias follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from db.errors import StoreError
from db.release_repo import current_promotion, get_model_version, promote
from db.values import ModelVersion, Promotion, User
from ui.auth import PermissionDenied, can, require

SLOTS = ("champion", "challenger")


@dataclass(frozen=True)
class Gate:
    """One release gate of a model version."""

    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class Decision:
    """Whether a promotion may go ahead, as an override or not, and why."""

    allowed: bool
    override: bool
    message: str


def gates_of(gate_results: dict[str, Any]) -> list[Gate]:
    """The gates of `ModelVersion.gate_results`: `{name: bool}` or `{name: {passed, ...}}`."""
    gates = []
    for name, result in sorted(gate_results.items()):
        if isinstance(result, dict):
            passed = bool(result.get("passed", result.get("pass", False)))
            detail = ", ".join(f"{k}={_short(v)}" for k, v in result.items()
                               if k not in ("passed", "pass"))
        else:
            passed, detail = bool(result), ""
        gates.append(Gate(name, passed, detail))
    return gates


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def gates_pass(gate_results: dict[str, Any]) -> bool:
    """True when there is at least one gate and every gate passed."""
    gates = gates_of(gate_results)
    return bool(gates) and all(g.passed for g in gates)


def promotion_decision(role: str, *, gates_passed: bool, override_reason: str = "") -> Decision:
    """The rule: operator with passing gates; admin past failed gates with a reason."""
    if not can(role, "release.promote"):
        return Decision(False, False, f"A {role} cannot promote; an operator or admin can.")
    if gates_passed:
        return Decision(True, False, "All gates passed.")
    if not can(role, "release.override"):
        return Decision(False, False, "The gates did not all pass: only an admin can promote "
                                      "it, as an override with a reason.")
    if not override_reason.strip():
        return Decision(False, False, "The gates did not all pass: an override needs a reason.")
    return Decision(True, True, "Override of failed gates by an admin.")


def promote_checked(
    session: Session, *, user: User, model_version_id: int, slot: str, override_reason: str = ""
) -> Promotion:
    """Promote if `promotion_decision` allows it; else raise `PermissionDenied`."""
    if slot not in SLOTS:
        raise StoreError(f"unknown slot {slot!r}; valid: {', '.join(SLOTS)}")
    model = get_model_version(session, model_version_id=model_version_id)
    current = current_promotion(session, slot=slot)
    if current is not None and current.model_version_id == model_version_id:
        raise StoreError(f"model version {model.version} already holds the {slot} slot")
    decision = promotion_decision(user.role, gates_passed=gates_pass(model.gate_results),
                                  override_reason=override_reason)
    if not decision.allowed:
        raise PermissionDenied(decision.message)
    reason = override_reason.strip() or "gates passed"
    return promote(session, slot=slot, model_version_id=model_version_id, actor=user.name,
                   reason=reason, gate_snapshot=model.gate_results, override=decision.override)


def rollback_checked(session: Session, *, user: User, slot: str, reason: str = "") -> Promotion:
    """Put the slot's previous model version back (operator or admin)."""
    require(user.role, "release.rollback")
    current = current_promotion(session, slot=slot)
    if current is None or current.previous_model_version_id is None:
        raise StoreError(f"the {slot} slot has no previous model version to roll back to")
    target = get_model_version(session, model_version_id=current.previous_model_version_id)
    note = f"rollback of promotion {current.id}" + (f": {reason.strip()}" if reason.strip() else "")
    return promote(session, slot=slot, model_version_id=target.id, actor=user.name, reason=note,
                   gate_snapshot=target.gate_results, override=False)


def update_mlflow_alias(model: ModelVersion, slot: str) -> str:
    """THE SEAM: make the MLflow registry alias `slot` point at `model` after a promotion.

    Called once the store's promotion has committed. The release flows (`flows/`, being
    written) will own the registry aliases champion / challenger / previous-champion; until
    then this only says what it would do. Replace the body with the registry call
    (`MlflowClient.set_registered_model_alias(model.registry_name, slot, model.version)`)
    or a Prefect deployment run of the release flow.
    """
    return (f"MLflow alias '{slot}' -> {model.registry_name} v{model.version}: "
            "not updated yet (the release flow owns registry aliases).")
