"""Validated A/B data: one row per (user, day) with an arm and numeric metrics.

`validate_ab_frame` is pure: it reads a raw table (every cell may still be text, as a CSV is
read) and either returns an `AbData` whose metric and covariate columns are floats, or raises
`AbDataError` listing every problem at once, each naming the column and the line (CSV: the
file's line number, header = line 1) or row (Parquet: 0-based) it concerns.

Columns: `user_id`, `arm`, `day`, then metrics. Without an explicit metric list every other
column is a metric, except `<metric>_pre` columns, which are pre-period covariates (one value
per user, used by CUPED).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hat_core.errors import Problem
from hat_core.evidence.errors import AbDataError

USER, ARM, DAY = "user_id", "arm", "day"
PRE_SUFFIX = "_pre"
MAX_LISTED = 5  # per kind of problem; the rest are counted


@dataclass(frozen=True)
class RowNames:
    """How problems name a row: CSV lines start at 2 (after the header), Parquet rows at 0."""

    word: str = "line"
    offset: int = 2

    def __call__(self, index: int) -> str:
        return f"{self.word} {index + self.offset}"


@dataclass(frozen=True, eq=False)
class AbData:
    """A validated table: `frame` has USER, ARM, DAY (text) and float metric/covariate columns."""

    frame: pd.DataFrame
    metrics: tuple[str, ...]
    covariates: dict[str, str]  # metric -> its `<metric>_pre` column
    control: str
    treatment: str

    def per_user(self) -> pd.DataFrame:
        """One row per user: arm, each metric summed over days, each covariate (per user)."""
        agg = {ARM: "first", **{m: "sum" for m in self.metrics},
               **{c: "first" for c in self.covariates.values()}}
        return self.frame.groupby(USER, sort=False).agg(agg)

    def days(self) -> list[str]:
        """The day labels in order (numerically when every label is a number)."""
        labels = self.frame[DAY].unique().tolist()
        numbers = pd.to_numeric(pd.Series(labels), errors="coerce")
        if numbers.notna().all():
            return [x for _, x in sorted(zip(numbers, labels, strict=True))]
        return sorted(labels)


def validate_ab_frame(raw: pd.DataFrame, *, control: str = "control",
                      treatment: str = "treatment", metrics: Sequence[str] | None = None,
                      source: str = "A/B data", rows: RowNames = RowNames()) -> AbData:
    """The table as `AbData`, or `AbDataError` with every problem found."""
    problems = _check_columns(raw, metrics)
    if problems:
        _raise(source, problems)
    frame = raw.reset_index(drop=True).copy()
    for col in (USER, ARM, DAY):
        frame[col] = frame[col].astype("string").str.strip()
    chosen = tuple(metrics) if metrics else _default_metrics(frame)
    covariates = {m: m + PRE_SUFFIX for m in chosen if m + PRE_SUFFIX in frame.columns}
    problems += _check_keys(frame, rows)
    problems += _check_arms(frame, control, treatment, rows)
    for col in (*chosen, *covariates.values()):
        frame[col], found = _numeric(frame[col], col, rows)
        problems += found
    if not problems:
        problems += _check_users(frame, covariates, control, treatment)
    if problems:
        _raise(source, problems)
    frame[[USER, ARM, DAY]] = frame[[USER, ARM, DAY]].astype(str)
    return AbData(frame=frame[[USER, ARM, DAY, *chosen, *covariates.values()]],
                  metrics=chosen, covariates=covariates, control=control, treatment=treatment)


def _raise(source: str, problems: list[Problem]) -> None:
    raise AbDataError(f"{source}: cannot analyse ({len(problems)} problems)", problems)


def _default_metrics(frame: pd.DataFrame) -> tuple[str, ...]:
    return tuple(c for c in frame.columns
                 if c not in (USER, ARM, DAY) and not str(c).endswith(PRE_SUFFIX))


def _check_columns(raw: pd.DataFrame, metrics: Sequence[str] | None) -> list[Problem]:
    have = ", ".join(map(str, raw.columns)) or "none"
    problems = [Problem(col, f"missing column (the file has: {have})")
                for col in (USER, ARM, DAY) if col not in raw.columns]
    problems += [Problem(m, f"unknown metric (the file has: {have})")
                 for m in metrics or () if m not in raw.columns]
    if not metrics and not problems and not _default_metrics(raw):
        problems.append(Problem("", f"no metric column besides {USER}, {ARM}, {DAY}"))
    if not problems and raw.empty:
        problems.append(Problem("", "the file has no rows"))
    return problems


def _listed(path: str, message: str, indices: Sequence[int], rows: RowNames) -> list[Problem]:
    """One problem per offending row, the first MAX_LISTED of them, then a count."""
    out = [Problem(f"{rows(i)}, column {path}", message) for i in indices[:MAX_LISTED]]
    if len(indices) > MAX_LISTED:
        out.append(Problem(f"column {path}", f"... and {len(indices) - MAX_LISTED} more rows"))
    return out


def _check_keys(frame: pd.DataFrame, rows: RowNames) -> list[Problem]:
    problems = []
    for col in (USER, DAY):
        empty = frame.index[frame[col].isna() | (frame[col] == "")].tolist()
        problems += _listed(col, "empty value", empty, rows)
    dup = frame.duplicated([USER, DAY], keep="first")
    for i in frame.index[dup].tolist()[:MAX_LISTED]:
        first = frame.index[(frame[USER] == frame.at[i, USER])
                            & (frame[DAY] == frame.at[i, DAY])][0]
        problems.append(Problem(f"{rows(i)}", f"duplicate row for user {frame.at[i, USER]!r} "
                                              f"day {frame.at[i, DAY]!r} (first at {rows(first)})"))
    if dup.sum() > MAX_LISTED:
        problems.append(Problem("", f"... and {int(dup.sum()) - MAX_LISTED} more duplicates"))
    return problems


def _check_arms(frame: pd.DataFrame, control: str, treatment: str,
                rows: RowNames) -> list[Problem]:
    arms = frame[ARM].fillna("")
    problems = []
    for value in arms[~arms.isin([control, treatment])].unique()[:MAX_LISTED]:
        where = frame.index[arms == value].tolist()
        problems.append(Problem(f"{rows(where[0])}, column {ARM}",
                                f"unknown arm {value!r} ({len(where)} rows; expected "
                                f"{control!r} or {treatment!r}, see --control/--treatment)"))
    return problems


def _numeric(column: pd.Series, name: str, rows: RowNames) -> tuple[pd.Series, list[Problem]]:
    values = pd.to_numeric(column, errors="coerce").astype(float)
    bad = values.isna() | ~np.isfinite(values)
    problems = []
    for i in column.index[bad].tolist()[:MAX_LISTED]:
        text = column.at[i]
        what = "empty value" if pd.isna(text) or str(text).strip() == "" else \
            f"{str(text)[:40]!r} is not a finite number"
        problems.append(Problem(f"{rows(i)}, column {name}", what))
    if bad.sum() > MAX_LISTED:
        more = int(bad.sum()) - MAX_LISTED
        problems.append(Problem(f"column {name}", f"... and {more} more rows"))
    return values, problems


def _check_users(frame: pd.DataFrame, covariates: dict[str, str], control: str,
                 treatment: str) -> list[Problem]:
    problems = []
    groups = frame.groupby(USER, sort=False)
    both = groups[ARM].nunique()
    for user in both[both > 1].index[:MAX_LISTED]:
        problems.append(Problem(f"user {user}", "appears in both arms"))
    for col in covariates.values():
        varying = groups[col].nunique()
        for user in varying[varying > 1].index[:MAX_LISTED]:
            problems.append(Problem(f"user {user}, column {col}",
                                    "a pre-period covariate must be the same on every day"))
    users = groups[ARM].first().value_counts()
    for arm in (control, treatment):
        if users.get(arm, 0) < 2:
            problems.append(Problem(ARM, f"arm {arm!r} has {users.get(arm, 0)} users "
                                         f"(at least 2 needed)"))
    return problems
