"""Judge calibration from the store: the judge's verdicts against human labels, and the gate.

Two sources of (judge, human) label pairs:
- `bad_cases`: every reviewed bad case with a label: the judge's verdict is the case's
  `failure_type`, the human's is the review label (`pass` when the reviewer dismissed it);
- `pairwise`: every vote on an item that carries a judge verdict, in closed reviews only
  (open ones stay blind): both as `a`, `b` or `tie`.

`judge_calibration` runs `hat_core.evidence.calibration` (accuracy, Cohen's kappa, per-label
agreement) on one source and applies `calibration_gate(min_kappa, min_n)`. `judge_decision` is the
gate's decision before a judge scores an evaluation (`hat_core.evaluation.judging`): the rule
judge always passes; an LLM judge is measured on its config's source, and an override of a
failed gate is written to the audit log. `judge_gate` is the one gate the retrain flow and
`hat eval run` call: the decision, or `JudgeGateError` with the numbers and the fix.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from db.audit_repo import record_audit
from db.engine import in_transaction
from db.errors import StoreError
from db.models import BadCaseRow
from db.pairwise_repo import closed_judge_pairs
from db.values import JudgeCalibration
from hat_core.evaluation.judging import (
    JudgeConfig,
    JudgeDecision,
    gate_decision,
    require_allowed,
    rule_decision,
)

SOURCES = ("bad_cases", "pairwise")


def badcase_label_pairs(session: Session, *,
                        model_version_id: int | None = None) -> list[tuple[str, str]]:
    """(judge failure type, human label) of every reviewed, labelled bad case, oldest first."""
    query = (select(BadCaseRow.failure_type, BadCaseRow.label)
             .where(BadCaseRow.reviewed_at.is_not(None), BadCaseRow.label != "")
             .order_by(BadCaseRow.id))
    if model_version_id is not None:
        query = query.where(BadCaseRow.model_version_id == model_version_id)
    return [(judge, human) for judge, human in session.execute(query)]


def label_pairs(session: Session, *, source: str) -> list[tuple[str, str]]:
    """The (judge, human) pairs of one source (`bad_cases` or `pairwise`)."""
    if source == "bad_cases":
        return badcase_label_pairs(session)
    if source == "pairwise":
        return closed_judge_pairs(session)
    raise StoreError(f"unknown calibration source {source!r}; valid: {', '.join(SOURCES)}")


def judge_calibration(session: Session, *, source: str, min_kappa: float = 0.6,
                      min_n: int = 100) -> JudgeCalibration:
    """Agreement, kappa and per-label agreement of one source, and the gate's verdict."""
    from hat_core.evidence.calibration import calibrate, calibration_gate, label_agreement

    pairs = label_pairs(session, source=source)
    if not pairs:
        return JudgeCalibration(source, 0, None, (), False,
                                f"no {source} items with both a judge and a human label")
    calibration = calibrate([j for j, _ in pairs], [h for _, h in pairs])
    ok, reason = calibration_gate(calibration, min_kappa=min_kappa, min_n=min_n)
    return JudgeCalibration(source, calibration.n, calibration,
                            tuple(label_agreement(calibration)), ok, reason)


def judge_decision(session: Session, *, config: JudgeConfig, min_kappa: float, min_n: int,
                   override: str | None = None, actor: str = "") -> JudgeDecision:
    """May the judge `config` names score an evaluation? An override of a failed gate (a
    reason) is allowed and recorded in the audit log as `judge_gate.override` by `actor`."""
    calibration = None if config.kind == "rule" else judge_calibration(
        session, source=config.source, min_kappa=min_kappa, min_n=min_n).calibration
    decision = gate_decision(config, calibration, min_kappa=min_kappa, min_n=min_n,
                             override=override)
    if decision.override and not decision.passed:
        record_audit(session, actor=actor or "unknown", action="judge_gate.override",
                     entity="judge_gate", entity_id=f"{config.kind}:{config.model}",
                     after=decision.to_dict())
    return decision


def judge_gate(sessions: sessionmaker[Session] | None, *, config: JudgeConfig, min_kappa: float,
               min_n: int, override: str | None = None, actor: str = "") -> JudgeDecision:
    """The judge gate before an evaluation, for the retrain flow and `hat eval run` alike.

    The rule judge passes without a store. An LLM judge needs the store's calibration on its
    source to pass (kappa >= `min_kappa` on >= `min_n` labelled items) or an `override`
    reason, which `judge_decision` writes to the audit log; otherwise `JudgeGateError` with
    the numbers and the fix. Nothing else is written either way."""
    if config.kind == "rule":
        return rule_decision()
    if sessions is None:
        raise StoreError("the LLM judge's gate reads the store's calibration: no store given")
    decision = in_transaction(sessions, lambda s: judge_decision(
        s, config=config, min_kappa=min_kappa, min_n=min_n, override=override, actor=actor))
    return require_allowed(decision)
