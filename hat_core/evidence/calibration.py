"""Judge calibration on top of `hat_core.sim.judge.calibrate`: per failure type, and a gate.

`calibrate(predicted, human)` (re-exported) gives accuracy, Cohen's kappa and the confusion
matrix (rows: human). `label_agreement` splits it by label: for each label (`pass` and every
failure type) the one-vs-rest 2x2 table, its Cohen's kappa (statsmodels `cohens_kappa`),
recall (of the human's label, the share the judge found) and precision. `calibration_gate` decides
whether the judge may stand in for humans: overall kappa at least `min_kappa` (0.6 is
"substantial", Landis and Koch 1977) on at least `min_n` items.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass

import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa

from hat_core.sim.judge import Calibration, calibrate

__all__ = ["Calibration", "LabelAgreement", "calibrate", "calibration_gate", "label_agreement"]


@dataclass(frozen=True)
class LabelAgreement:
    """One label, one-vs-rest: counts by human and by judge, both, recall, precision, kappa."""

    label: str
    n_human: int
    n_judge: int
    n_both: int
    recall: float  # n_both / n_human
    precision: float  # n_both / n_judge
    kappa: float

    def to_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v)
                for k, v in asdict(self).items()}


def label_agreement(calibration: Calibration) -> list[LabelAgreement]:
    """Per-label agreement, in `calibration.labels` order."""
    matrix = np.asarray(calibration.confusion, dtype=float)
    total = matrix.sum()
    out = []
    for i, label in enumerate(calibration.labels):
        both, human, judge = matrix[i, i], matrix[i].sum(), matrix[:, i].sum()
        table = np.array([[both, human - both], [judge - both, total - human - judge + both]])
        out.append(LabelAgreement(label, int(human), int(judge), int(both),
                                  float(both / human) if human else math.nan,
                                  float(both / judge) if judge else math.nan, _kappa(table)))
    return out


def _kappa(table: np.ndarray) -> float:
    """Cohen's kappa of a 2x2 table; NaN when undefined (one category only)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(cohens_kappa(table, return_results=False))
    return value if math.isfinite(value) else math.nan


def calibration_gate(calibration: Calibration, min_kappa: float = 0.6,
               min_n: int = 100) -> tuple[bool, str]:
    """(ok, reason): may this judge's verdicts stand in for human review?"""
    if calibration.n < min_n:
        return False, f"only {calibration.n} calibration items (need {min_n})"
    if calibration.kappa < min_kappa:
        return False, (f"kappa {calibration.kappa:.3f} < {min_kappa} on {calibration.n} items "
                       f"(accuracy {calibration.accuracy:.3f})")
    return True, f"kappa {calibration.kappa:.3f} >= {min_kappa} on {calibration.n} items"
