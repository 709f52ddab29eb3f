"""Saved A/B analyses: the analysed file's name and sha256, the settings and the result.

`save_ab_analysis` stores an `AbReport.to_dict()` (what `hat ab analyze --save` and the
console's A/B page compute); the per-user rows are not stored (docs/store.md). Analyses are
immutable: the table refuses UPDATE and DELETE.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.audit_repo import record_audit
from db.errors import StoreError
from db.models import AbAnalysisRow, utcnow
from db.rows import snapshot, to_value
from db.values import AbAnalysis
from hat_core.errors import NotFoundError

_SHA256 = re.compile(r"[0-9a-f]{64}")


def save_ab_analysis(
    session: Session,
    *,
    name: str,
    source_name: str,
    source_sha256: str,
    result: dict[str, Any],
    n_rows: int,
    n_users: int,
    actor: str,
) -> AbAnalysis:
    """Store one analysis; `result` is `AbReport.to_dict()` (arms, settings, metrics)."""
    problems = _problems(name, source_sha256, result)
    if problems:
        raise StoreError("cannot save the A/B analysis: " + "; ".join(problems))
    row = AbAnalysisRow(
        name=name.strip(), source_name=source_name, source_sha256=source_sha256,
        control=result["control"], treatment=result["treatment"],
        metrics=[m["metric"] for m in result["metrics"]], n_rows=n_rows, n_users=n_users,
        trustworthy=bool(result.get("trustworthy", False)), settings=result.get("settings", {}),
        result=result, created_by=actor, created_at=utcnow(),
    )
    session.add(row)
    session.flush()
    record_audit(session, actor=actor, action="ab_analysis.create", entity="ab_analysis",
                 entity_id=row.id, after=snapshot(row, "name", "source_name", "source_sha256",
                                                  "metrics", "trustworthy"))
    return to_value(AbAnalysis, row)


def get_ab_analysis(session: Session, *, analysis_id: int) -> AbAnalysis:
    """The analysis with id `analysis_id`."""
    row = session.get(AbAnalysisRow, analysis_id)
    if row is None:
        raise NotFoundError(f"no A/B analysis with id {analysis_id}")
    return to_value(AbAnalysis, row)


def list_ab_analyses(session: Session, *, source_sha256: str | None = None,
                     limit: int = 50) -> list[AbAnalysis]:
    """Saved analyses, newest first; optionally only those of one file (by its sha256)."""
    query = select(AbAnalysisRow).order_by(AbAnalysisRow.id.desc()).limit(limit)
    if source_sha256 is not None:
        query = query.where(AbAnalysisRow.source_sha256 == source_sha256)
    return [to_value(AbAnalysis, r) for r in session.scalars(query)]


def _problems(name: str, sha256: str, result: dict[str, Any]) -> list[str]:
    problems = []
    if not name.strip():
        problems.append("the name is empty")
    if not _SHA256.fullmatch(sha256):
        problems.append(f"source_sha256 {sha256!r} is not 64 lowercase hex digits")
    missing = [k for k in ("control", "treatment", "metrics") if k not in result]
    if missing:
        problems.append(f"result lacks {', '.join(missing)} (pass AbReport.to_dict())")
    elif not result["metrics"]:
        problems.append("result has no metrics")
    return problems
