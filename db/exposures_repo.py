"""Exposures: one row per request the A/B gateway answered, written in batches.

`add_exposures` inserts a whole batch in one statement (the gateway's `ExposureLog` calls it
from its writer thread). Exposures are a log, not a change of state: they are not audited
one by one. `arm_counts` is the assignment log's users and requests per arm (the SRM input).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from sqlalchemy import distinct, func, insert, select
from sqlalchemy.orm import Session

from db.models import ExposureRow
from hat_core.serving.exposure import Exposure


def add_exposures(session: Session, *, exposures: Sequence[Exposure]) -> int:
    """Insert every exposure of the batch; the number inserted."""
    if exposures:
        session.execute(insert(ExposureRow), [asdict(e) for e in exposures])
    return len(exposures)


@dataclass(frozen=True)
class ArmCount:
    """One arm of an experiment in the assignment log: distinct users, requests, failures."""

    arm: str
    users: int
    requests: int
    errors: int  # requests answered with a status of 400 or more


def arm_counts(session: Session, *, experiment_id: int) -> list[ArmCount]:
    """Users, requests and failed requests per arm, by arm name."""
    query = (select(ExposureRow.arm, func.count(distinct(ExposureRow.user_id)),
                    func.count(ExposureRow.id),
                    func.count(ExposureRow.id).filter(ExposureRow.status >= 400))
             .where(ExposureRow.experiment_id == experiment_id)
             .group_by(ExposureRow.arm).order_by(ExposureRow.arm))
    return [ArmCount(arm, users, n, errors) for arm, users, n, errors in session.execute(query)]


def user_arms(session: Session, *, experiment_id: int) -> dict[str, str]:
    """Each exposed user's arm: the arm of the user's first exposure."""
    first = (select(ExposureRow.user_id, func.min(ExposureRow.id).label("first_id"))
             .where(ExposureRow.experiment_id == experiment_id)
             .group_by(ExposureRow.user_id).subquery())
    query = (select(ExposureRow.user_id, ExposureRow.arm)
             .join(first, ExposureRow.id == first.c.first_id))
    return dict(session.execute(query).all())


def list_exposures(session: Session, *, experiment_id: int, limit: int = 1000) -> list[Exposure]:
    """The newest exposures of an experiment, newest first."""
    query = (select(ExposureRow).where(ExposureRow.experiment_id == experiment_id)
             .order_by(ExposureRow.id.desc()).limit(limit))
    return [Exposure(r.experiment_id, r.user_id, r.arm, r.model_version, r.model_version_id,
                     r.harness_version, r.request_id, r.latency_ms, r.status, r.created_at)
            for r in session.scalars(query)]
