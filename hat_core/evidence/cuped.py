"""CUPED (Deng, Xu, Kohavi and Walker 2013): variance reduction with a pre-period covariate.

Y_adj = Y - theta (X - mean(X)), theta = cov(Y, X) / var(X), both pooled over the two arms
(randomisation makes X independent of the arm, so the adjustment leaves the expected
difference unchanged and removes the share rho^2 of the variance that X explains).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Cuped:
    """The covariate used, theta, and 1 - var(Y_adj) / var(Y) over both arms."""

    covariate: str
    theta: float
    variance_reduction: float

    def to_dict(self) -> dict:
        return {"covariate": self.covariate, "theta": self.theta,
                "variance_reduction": self.variance_reduction}


def cuped_adjust(y_control: np.ndarray, x_control: np.ndarray, y_treatment: np.ndarray,
                 x_treatment: np.ndarray, covariate: str = "x",
                 ) -> tuple[np.ndarray, np.ndarray, Cuped]:
    """The adjusted control and treatment values and the adjustment's summary."""
    y = np.concatenate([y_control, y_treatment]).astype(float)
    x = np.concatenate([x_control, x_treatment]).astype(float)
    var_x, var_y = np.var(x, ddof=1), np.var(y, ddof=1)
    theta = float(np.cov(y, x, ddof=1)[0, 1] / var_x) if var_x > 0 else 0.0
    x_mean = x.mean()
    adj_c = y_control - theta * (x_control - x_mean)
    adj_t = y_treatment - theta * (x_treatment - x_mean)
    adjusted_var = np.var(np.concatenate([adj_c, adj_t]), ddof=1)
    reduction = float(1 - adjusted_var / var_y) if var_y > 0 else 0.0
    return adj_c, adj_t, Cuped(covariate, theta, reduction)
