"""Judge calibration for the console: the store's calibrations, the gate and the tables.

The gate's threshold comes from the settings (`HAT_JUDGE_MIN_KAPPA`, default 0.6, and
`HAT_JUDGE_MIN_ITEMS`, default 100): below it, the judge's verdicts of that kind may not stand
in for human review.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from db.calibration_repo import SOURCES, judge_calibration
from db.values import JudgeCalibration

TITLES = {"bad_cases": "Bad-case verdicts (failure type) against reviewers' labels",
          "pairwise": "Pairwise verdicts (A, tie, B) against reviewers' votes"}


def calibrations(session: Session, *, min_kappa: float,
                 min_n: int) -> list[JudgeCalibration]:
    """One calibration per source, each with the gate's verdict."""
    return [judge_calibration(session, source=s, min_kappa=min_kappa, min_n=min_n)
            for s in SOURCES]


def summary_row(c: JudgeCalibration) -> dict:
    """Items, accuracy, kappa and the gate of one source."""
    cal = c.calibration
    return {"source": c.source, "items": c.n,
            "agreement": "-" if cal is None else f"{cal.accuracy:.1%}",
            "Cohen's kappa": "-" if cal is None else f"{cal.kappa:.3f}",
            "gate": "pass" if c.gate_ok else "refused", "why": c.gate_reason}


def label_rows(c: JudgeCalibration) -> list[dict]:
    """Per label (pass / failure type, or a / b / tie), one-vs-rest."""
    return [{"label": a.label, "human": a.n_human, "judge": a.n_judge, "both": a.n_both,
             "recall": _num(a.recall, "{:.1%}"), "precision": _num(a.precision, "{:.1%}"),
             "kappa": _num(a.kappa, "{:.3f}")} for a in c.agreement]


def confusion_rows(c: JudgeCalibration) -> list[dict]:
    """The confusion matrix, rows the human label, columns the judge's."""
    if c.calibration is None:
        return []
    labels = c.calibration.labels
    return [{"human \\ judge": h, **dict(zip(labels, row, strict=True))}
            for h, row in zip(labels, c.calibration.confusion, strict=True)]


def _num(x: float, fmt: str) -> str:
    return "-" if x != x else fmt.format(x)
