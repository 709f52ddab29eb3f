"""An experiment's A/B table read from the store: exposures (each user's arm) and outcome
events, validated as `hat ab analyze FILE` validates a file (`hat ab analyze --experiment`).

The SRM check then runs on the assignment log: every exposed user is a row, so the arms'
user counts are the exposures' distinct users per arm, against the experiment's split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from db.experiments_repo import find_experiment, list_experiments
from db.exposures_repo import ArmCount, arm_counts, user_arms
from db.outcomes_repo import list_outcomes
from db.values import AbExperiment
from hat_core.evidence.ab_data import AbData, validate_ab_frame
from hat_core.evidence.ab_events import table_from_events
from hat_core.evidence.srm import SrmCheck, srm_check
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


@dataclass(frozen=True)
class LiveExperiment:
    """The slot's newest experiment: its split, users and requests per arm, the SRM check."""

    experiment: AbExperiment
    counts: tuple[ArmCount, ...]
    srm: SrmCheck | None  # None until both arms have users


def live_experiment(session: Session, *, slot: str = "ab") -> LiveExperiment | None:
    """What the console's Release page shows of the running A/B experiment (None: none)."""
    found = next((e for e in list_experiments(session) if e.slot == slot), None)
    if found is None:
        return None
    counts = tuple(arm_counts(session, experiment_id=found.id))
    users = {c.arm: c.users for c in counts}
    srm = None
    if users.get(CONTROL) and users.get(TREATMENT):
        srm = srm_check(users[CONTROL], users[TREATMENT],
                        found.assignment().control_share)
    return LiveExperiment(found, counts, srm)
