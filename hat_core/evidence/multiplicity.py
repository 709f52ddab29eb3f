"""Adjusted p-values for many metrics: statsmodels `multipletests` (Holm by default).

`holm` controls the family-wise error rate (any false positive among the metrics);
`fdr_bh` (Benjamini-Hochberg) the expected share of false positives among the significant
ones; `none` leaves the p-values as they are. NaN p-values are left out and stay NaN.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from statsmodels.stats.multitest import multipletests

from hat_core.errors import ConfigError, Problem
from hat_core.evidence.options import CORRECTIONS


def check_correction(method: str) -> str:
    """The method, or `ConfigError` listing the valid ones."""
    if method not in CORRECTIONS:
        raise ConfigError(f"unknown correction {method!r}",
                          [Problem("correction", f"one of {', '.join(CORRECTIONS)}")])
    return method


def adjust_pvalues(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """The adjusted p-values, in the input order."""
    check_correction(method)
    p = np.asarray(p_values, float)
    out = p.copy()
    ok = ~np.isnan(p)
    # one test needs no correction (and statsmodels' Holm runs a full gc.collect per call)
    if method != "none" and ok.sum() > 1:
        out[ok] = multipletests(p[ok], method=method)[1]
    return [float(x) for x in out]
