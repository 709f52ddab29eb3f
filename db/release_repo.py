"""Model versions, their evaluation results, and promotions into serving slots.

`promote` records which model version now holds a slot and which one it replaced, with the
gate snapshot it was judged on; a promotion past failed gates needs `override=True` and a
reason. A rollback is a promotion of the previous version.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.errors import StoreError
from db.models import EvalResultRow, ModelVersionRow, PromotionRow, utcnow
from db.rows import snapshot, to_value
from db.values import EvalResult, ModelVersion, Promotion
from hat_core.errors import NotFoundError


def register_model_version(
    session: Session,
    *,
    registry_name: str,
    version: str,
    job_id: int | None = None,
    mlflow_run_id: str = "",
    gate_results: dict[str, Any] | None = None,
    actor: str = "system",
) -> ModelVersion:
    """Record a model version registered in MLflow (name + version) and its gate results."""
    row = ModelVersionRow(
        registry_name=registry_name, version=str(version), job_id=job_id,
        mlflow_run_id=mlflow_run_id, gate_results=gate_results or {}, created_at=utcnow(),
    )
    session.add(row)
    session.flush()
    record_audit(
        session, actor=actor, action="model_version.register", entity="model_version",
        entity_id=row.id,
        after=snapshot(row, "registry_name", "version", "job_id", "mlflow_run_id"),
    )
    return to_value(ModelVersion, row)


def get_model_version(session: Session, *, model_version_id: int) -> ModelVersion:
    """The model version with id `model_version_id`."""
    row = session.get(ModelVersionRow, model_version_id)
    if row is None:
        raise NotFoundError(f"no model version with id {model_version_id}")
    return to_value(ModelVersion, row)


def list_model_versions(
    session: Session, *, registry_name: str | None = None, limit: int = 100
) -> list[ModelVersion]:
    """Newest model versions first."""
    query = select(ModelVersionRow).order_by(ModelVersionRow.id.desc()).limit(limit)
    if registry_name is not None:
        query = query.where(ModelVersionRow.registry_name == registry_name)
    return [to_value(ModelVersion, r) for r in session.scalars(query)]


def add_eval_result(
    session: Session,
    *,
    model_version_id: int,
    suite: str,
    metric: str,
    value: float,
    cases_uri: str = "",
    harness_version_id: int | None = None,
    actor: str = "system",
) -> EvalResult:
    """Record one metric of one suite (per-case results live at `cases_uri`)."""
    row = EvalResultRow(
        model_version_id=model_version_id, harness_version_id=harness_version_id, suite=suite,
        metric=metric, value=float(value), cases_uri=cases_uri, created_at=utcnow(),
    )
    session.add(row)
    session.flush()
    record_audit(
        session, actor=actor, action="eval_result.add", entity="eval_result", entity_id=row.id,
        after=snapshot(row, "model_version_id", "suite", "metric", "value"),
    )
    return to_value(EvalResult, row)


def list_eval_results(session: Session, *, model_version_id: int) -> list[EvalResult]:
    """The evaluation results of a model version, by suite and metric."""
    query = (
        select(EvalResultRow)
        .where(EvalResultRow.model_version_id == model_version_id)
        .order_by(EvalResultRow.suite, EvalResultRow.metric, EvalResultRow.id)
    )
    return [to_value(EvalResult, r) for r in session.scalars(query)]


def promote(
    session: Session,
    *,
    slot: str,
    model_version_id: int,
    actor: str,
    reason: str = "",
    gate_snapshot: dict[str, Any] | None = None,
    override: bool = False,
) -> Promotion:
    """Put a model version into `slot`; an override of failed gates needs a reason."""
    get_model_version(session, model_version_id=model_version_id)
    if override and not reason.strip():
        raise StoreError("a promotion that overrides its gates needs a reason")
    current = current_promotion(session, slot=slot)
    row = PromotionRow(
        slot=slot, model_version_id=model_version_id,
        previous_model_version_id=current.model_version_id if current else None,
        actor=actor, reason=reason, gate_snapshot=gate_snapshot or {}, override=override,
        created_at=utcnow(),
    )
    session.add(row)
    session.flush()
    record_audit(
        session, actor=actor, action="promotion.add", entity="slot", entity_id=slot,
        before={"model_version_id": row.previous_model_version_id},
        after=snapshot(row, "model_version_id", "reason", "override"),
    )
    return to_value(Promotion, row)


def current_promotion(session: Session, *, slot: str) -> Promotion | None:
    """The latest promotion into `slot` (its model version holds the slot), or None."""
    query = (
        select(PromotionRow).where(PromotionRow.slot == slot)
        .order_by(PromotionRow.id.desc()).limit(1)
    )
    row = session.scalars(query).first()
    return to_value(Promotion, row) if row else None


def list_promotions(
    session: Session, *, slot: str | None = None, limit: int = 100
) -> list[Promotion]:
    """Newest promotions first."""
    query = select(PromotionRow).order_by(PromotionRow.id.desc()).limit(limit)
    if slot is not None:
        query = query.where(PromotionRow.slot == slot)
    return [to_value(Promotion, r) for r in session.scalars(query)]
