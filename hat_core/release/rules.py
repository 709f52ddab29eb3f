"""Release rules of the A/B slot: who may promote, which gates passed, what a rollback restores.

Pure: roles, gate results and ids in, decisions out. The one release path
(`db.promotion.promote_slot` / `rollback_slot`, used by `hat promote`, the flows and the
console) applies them, then moves the registry aliases and writes the store's row.

    gates_of(model.gate_results)          # [Gate(name, passed, detail, verdict)]
    gates_verdict(model.gate_results)     # passed / failed / inconclusive
    check_promotion("operator", version="3", gate_results=..., override_reason="")

A version whose gates did not all pass (failed, inconclusive, or none recorded) is promoted
only by an admin with a reason: an inconclusive verdict is no evidence that the candidate is
as good as the champion, so it needs the same override as a failed one.

The slot is `ab`: A is the champion (alias `champion`), B the challenger (alias `challenger`),
and the champion a promotion replaced keeps the alias `previous-champion` for rollback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hat_core.errors import HatError, Problem
from hat_core.release.verdict import FAILED, INCONCLUSIVE, PASSED

SLOT = "ab"
CHAMPION, CHALLENGER, PREVIOUS = "champion", "challenger", "previous-champion"
PROMOTER_ROLES = ("operator", "admin")
OVERRIDE_ROLE = "admin"


class ReleaseRefused(HatError):
    """A promotion or rollback the rules do not allow (role, gates, nothing to restore)."""


@dataclass(frozen=True)
class Gate:
    """One blessing gate of a model version: passed or not, the measured detail, and the
    verdict (`passed`, `failed` or `inconclusive`)."""

    name: str
    passed: bool
    detail: str
    verdict: str = ""

    def __post_init__(self) -> None:
        if not self.verdict:
            object.__setattr__(self, "verdict", PASSED if self.passed else FAILED)


@dataclass(frozen=True)
class Decision:
    """Whether a promotion may go ahead, as an override or not, and why."""

    allowed: bool
    override: bool
    message: str


def gates_of(gate_results: Mapping[str, Any]) -> list[Gate]:
    """The gates of `ModelVersion.gate_results` as the flows write it (`GateResults.to_dict()`:
    `{"passed": bool, "verdict": str, "gates": {name: {passed, verdict, value, threshold,
    reason, evidence}}}`; results stored before verdicts existed have none: passed or
    failed), by name."""
    gates = gate_results.get("gates")
    if not isinstance(gates, Mapping):
        return []
    return [Gate(name, bool(g.get("passed")), _detail(g), _verdict(g))
            for name, g in sorted(gates.items())]


def _verdict(gate: Mapping[str, Any]) -> str:
    verdict = gate.get("verdict")
    if gate.get("passed"):
        return PASSED
    return verdict if verdict in (FAILED, INCONCLUSIVE) else FAILED


def _detail(gate: Mapping[str, Any]) -> str:
    """`reason (value=..., threshold=...)`; a paired gate's threshold is the reference's value."""
    names = {"value": "value", "threshold": "reference" if gate.get("evidence") else "threshold"}
    shown = ", ".join(f"{label}={_short(gate[k])}" for k, label in names.items()
                      if gate.get(k) is not None)
    reason = str(gate.get("reason") or "")
    return f"{reason} ({shown})" if reason and shown else reason or shown


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def gates_passed(gate_results: Mapping[str, Any]) -> bool:
    """True when at least one gate was checked, every gate passed and the verdict says so."""
    gates = gates_of(gate_results)
    return bool(gates) and all(g.passed for g in gates) and bool(gate_results.get("passed", True))


def gates_verdict(gate_results: Mapping[str, Any]) -> str:
    """`passed` (`gates_passed`), `failed` (a gate failed) or `inconclusive` (no gate failed
    but not all passed, or none was recorded)."""
    if gates_passed(gate_results):
        return PASSED
    gates = gates_of(gate_results)
    stored = gate_results.get("verdict")
    old_failed = stored is None and gate_results.get("passed") is False  # before verdicts
    if any(g.verdict == FAILED for g in gates) or gates and (stored == FAILED or old_failed):
        return FAILED
    return INCONCLUSIVE


def promotion_decision(role: str, *, gates_passed: bool, override_reason: str = "",
                       verdict: str = FAILED) -> Decision:
    """Reviewers and viewers never; operators when the gates passed; admins past failed or
    inconclusive gates (`verdict`) only with a non-empty reason (an override)."""
    if role not in PROMOTER_ROLES:
        return Decision(False, False, f"a {role} cannot promote; an operator or admin can")
    if gates_passed:
        return Decision(True, False, "all gates passed")
    if role != OVERRIDE_ROLE:
        return Decision(False, False, "only an admin may promote it, as an override with a "
                                      f"reason (you are {role})")
    if not override_reason.strip():
        return Decision(False, False, "an override needs a reason")
    return Decision(True, True, f"override of {verdict} gates by an admin")


def check_actor(actor: str, role: str | None) -> str:
    """The role of a user who may promote or roll back; else `ReleaseRefused`."""
    if role in PROMOTER_ROLES:
        return role
    held = f"role {role}" if role else "no user record"
    raise ReleaseRefused(
        f"{actor!r} may not promote or roll back ({held})",
        [Problem("actor", f"needs a user with role {' or '.join(PROMOTER_ROLES)}; "
                          "add one with `hat user add NAME --role operator`")])


def check_promotion(role: str, *, version: str, gate_results: Mapping[str, Any],
                    override_reason: str = "") -> bool:
    """Whether promoting `version` is an override; `ReleaseRefused` (each gate that did not
    pass, its verdict and reason as a problem) when `promotion_decision` says no."""
    passed = gates_passed(gate_results)
    verdict = gates_verdict(gate_results)
    decision = promotion_decision(role, gates_passed=passed, override_reason=override_reason,
                                  verdict=verdict)
    if decision.allowed:
        return decision.override
    held = [g for g in gates_of(gate_results) if not g.passed]
    names = ", ".join(g.name for g in held) or "no gate results recorded"
    what = "failed its gates" if verdict == FAILED else "has inconclusive gates"
    raise ReleaseRefused(f"version {version} {what} ({names}): {decision.message}",
                         [Problem(f"gates.{g.name}", g.detail if g.verdict == FAILED
                                  else f"{g.verdict}: {g.detail}") for g in held])


def rollback_target(current_id: int | None, replaced_id: int | None, slot: str = SLOT) -> int:
    """The model version a rollback restores: the one the current champion replaced."""
    if current_id is None or replaced_id is None:
        raise ReleaseRefused(f"slot {slot!r} has no previous champion to roll back to")
    return replaced_id


@dataclass(frozen=True)
class Candidate:
    """A registered model version as the challenger rule sees it (registration order = id)."""

    id: int
    gate_results: Mapping[str, Any]


def challenger_of(candidates: Sequence[Candidate], champion_id: int | None,
                  previous_id: int | None = None) -> int | None:
    """The B slot as the registry's `challenger` alias holds it: the newest version that passed
    its gates, registered after the champion, neither the champion nor the one it replaced."""
    passing = [c.id for c in candidates if gates_passed(c.gate_results)
               and c.id not in (champion_id, previous_id)
               and (champion_id is None or c.id > champion_id)]
    return max(passing, default=None)
