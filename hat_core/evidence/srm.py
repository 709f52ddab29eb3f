"""Sample-ratio mismatch: are the arms' user counts what the assignment split promised?

A chi-square goodness-of-fit test (scipy `chisquare`) of (n_control, n_treatment) against
N (share, 1 - share). A p-value below 0.001 (the usual SRM threshold; Fabijan et al. 2019)
means the assignment or the logging is broken and the lift estimates are not trustworthy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from scipy import stats

from hat_core.errors import ConfigError, Problem

SRM_THRESHOLD = 0.001


@dataclass(frozen=True)
class SrmCheck:
    """Observed counts, the expected control share, chi-square statistic, p, and the flag."""

    n_control: int
    n_treatment: int
    expected_control_share: float
    observed_control_share: float
    chi2: float
    p_value: float
    threshold: float
    mismatch: bool

    def to_dict(self) -> dict:
        return asdict(self)


def srm_check(n_control: int, n_treatment: int, expected_control_share: float = 0.5,
              threshold: float = SRM_THRESHOLD) -> SrmCheck:
    """The SRM test; `mismatch` is True when p < threshold."""
    if not 0 < expected_control_share < 1:
        raise ConfigError(f"bad expected split {expected_control_share}",
                          [Problem("expected_split",
                                   "the control share, strictly between 0 and 1")])
    total = n_control + n_treatment
    expected = [total * expected_control_share, total * (1 - expected_control_share)]
    chi2, p = stats.chisquare([n_control, n_treatment], f_exp=expected)
    return SrmCheck(int(n_control), int(n_treatment), float(expected_control_share),
                    n_control / total if total else float("nan"), float(chi2), float(p),
                    threshold, bool(p < threshold))
