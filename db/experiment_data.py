"""An experiment's A/B table read from the store: exposures (each user's arm) and outcome
events, validated as `hat ab analyze FILE` validates a file (`hat ab analyze --experiment`).

The SRM check then runs on the assignment log: every exposed user is a row, so the arms'
user counts are the exposures' distinct users per arm, against the experiment's split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from db.experiments_repo import find_experiment
from db.exposures_repo import user_arms
from db.outcomes_repo import list_outcomes
from hat_core.evidence.ab_data import AbData, validate_ab_frame
from hat_core.evidence.ab_events import table_from_events
from hat_core.serving.assignment import CONTROL, TREATMENT


@dataclass(frozen=True, eq=False)
class ExperimentData:
    """The validated table, the experiment's control share, and what was left out."""

    data: AbData
    control_share: float
    note: str


def experiment_data(session: Session, *, ref: str,
                    metrics: Sequence[str] | None = None) -> ExperimentData:
    """The experiment `ref` (name or id) as `AbData`; `AbDataError` lists what is wrong."""
    exp = find_experiment(session, ref=ref)
    arms = user_arms(session, experiment_id=exp.id)
    table = table_from_events(arms, list_outcomes(session, experiment_id=exp.id))
    note = ""
    if table.users_without_outcomes or table.users_not_exposed or table.dropped_covariates:
        note = (f"experiment {exp.name}: {len(arms)} exposed users, "
                f"{table.users_without_outcomes} without outcomes (counted as 0), "
                f"{table.users_not_exposed} with outcomes but no exposure (left out); "
                f"covariates dropped: {', '.join(table.dropped_covariates) or 'none'}")
    data = validate_ab_frame(table.frame, control=CONTROL, treatment=TREATMENT,
                             metrics=metrics, source=f"experiment {exp.name}")
    return ExperimentData(data, exp.assignment().control_share, note)
