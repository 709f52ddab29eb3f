"""A/B data from events: the gateway's assignment log and per-user outcome events.

    events = events_from_frame(frame)                 # a CSV's metric cells as outcome events
    table = table_from_events(user_arms, events)      # the raw table `validate_ab_frame` reads

Pure. `table_from_events` gives the same (user, day) rows and metric columns a CSV of the
same data has, so `hat ab analyze --experiment ID` (the store) and `hat ab analyze FILE`
agree: metrics in the order they were first recorded, rows by day then user id. Exposed
users with no outcome count as 0 on the first day (they were exposed and did nothing);
outcome events of users never exposed are left out (counted in `EventTable`). A `_pre`
covariate is the user's one value on every row; a covariate some exposed user lacks is
dropped (CUPED off for its metric), and named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from hat_core.errors import Problem
from hat_core.evidence.ab_data import ARM, DAY, PRE_SUFFIX, USER
from hat_core.evidence.errors import AbDataError


@dataclass(frozen=True)
class OutcomeEvent:
    """One metric's value for one user on one day (a day label: `2026-12-05`, `1` ...)."""

    user_id: str
    day: str
    metric: str
    value: float


@dataclass(frozen=True, eq=False)
class EventTable:
    """The raw per-(user, day) table and what was left out of it."""

    frame: pd.DataFrame
    users_without_outcomes: int
    users_not_exposed: int
    dropped_covariates: tuple[str, ...]


def events_from_frame(frame: pd.DataFrame, metrics: Sequence[str] | None = None
                      ) -> list[OutcomeEvent]:
    """Every metric cell of a user/day table as an event (`arm` and empty cells ignored)."""
    problems = [Problem(c, "missing column") for c in (USER, DAY) if c not in frame.columns]
    if problems:
        raise AbDataError("outcome table: cannot read", problems)
    names = list(metrics) if metrics else [c for c in frame.columns if c not in (USER, ARM, DAY)]
    values = frame[names].apply(pd.to_numeric, errors="coerce")
    out = []
    for i, (user, day) in enumerate(zip(frame[USER].astype(str), frame[DAY].astype(str),
                                        strict=True)):
        row = values.iloc[i]
        out += [OutcomeEvent(user.strip(), day.strip(), m, float(row[m]))
                for m in names if pd.notna(row[m])]
    return out


def table_from_events(user_arms: Mapping[str, str], events: Sequence[OutcomeEvent]
                      ) -> EventTable:
    """The user/day table of the exposed users (see the module docstring)."""
    exposed = [e for e in events if e.user_id in user_arms]
    metrics = list(dict.fromkeys(e.metric for e in exposed))
    long = pd.DataFrame([(e.user_id, e.day, e.metric, e.value) for e in exposed],
                        columns=[USER, DAY, "metric", "value"])
    wide = long.pivot(index=[USER, DAY], columns="metric", values="value").reset_index()
    days = sorted(set(long[DAY]), key=_day_key) or ["1"]
    silent = sorted(set(user_arms) - set(long[USER]))
    wide = pd.concat([wide, pd.DataFrame({USER: silent, DAY: days[0]})], ignore_index=True)
    covariates = [m for m in metrics if m.endswith(PRE_SUFFIX)]
    plain = [m for m in metrics if m not in covariates]
    wide[plain] = wide[plain].fillna(0.0)
    dropped = []
    for cov in covariates:
        wide[cov] = wide.groupby(USER)[cov].transform("first")
        if wide[cov].isna().any():
            dropped.append(cov)
    kept = [m for m in metrics if m not in dropped]
    wide[ARM] = wide[USER].map(user_arms)
    order = {d: i for i, d in enumerate(days)}
    wide = wide.sort_values([DAY, USER], key=lambda s: s.map(order) if s.name == DAY else s)
    frame = wide[[USER, ARM, DAY, *kept]].reset_index(drop=True)
    not_exposed = len({e.user_id for e in events} - set(user_arms))
    return EventTable(frame, len(silent), not_exposed, tuple(dropped))


def _day_key(label: str) -> tuple:
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)
