"""Frequentist checks over many simulated experiments with a known true lift.

The 95% intervals (Welch + delta method, and the bootstrap) must cover the true lift about
95% of the time, and under no effect Welch's p-value must be uniform. The default tier runs a
quick version with wide bands; the `slow` tier runs 200 experiments with the bands of the
issue ([0.90, 0.99] coverage) and 400 null experiments (KS not rejecting at 0.01, about 5%
rejections at alpha 0.05, for the bootstrap p-value too).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from hat_core.evidence.ab import AbConfig

TRUE_LIFT = 0.05


def coverage(run_experiment, seeds, *, n, bootstrap=0, alpha=0.05) -> tuple[float, float]:
    """Share of experiments whose Welch (and bootstrap) interval covers TRUE_LIFT."""
    welch, boot = [], []
    for seed in seeds:
        config = AbConfig(alpha=alpha, bootstrap=bootstrap, stability=False, seed=seed)
        m = run_experiment(seed, n_control=n, n_treatment=n, true_lift=TRUE_LIFT,
                           config=config).metric("gmv")
        welch.append(m.welch.ci_low <= TRUE_LIFT <= m.welch.ci_high)
        if bootstrap:
            boot.append(m.bootstrap.ci_low <= TRUE_LIFT <= m.bootstrap.ci_high)
    return float(np.mean(welch)), float(np.mean(boot)) if boot else float("nan")


def null_pvalues(run_experiment, seeds, *, n, bootstrap=0) -> tuple[np.ndarray, np.ndarray]:
    """Welch (and bootstrap) p-values of experiments with no effect."""
    welch, boot = [], []
    for seed in seeds:
        config = AbConfig(bootstrap=bootstrap, stability=False, seed=seed)
        m = run_experiment(10_000 + seed, n_control=n, n_treatment=n, true_lift=0.0,
                           config=config).metric("gmv")
        welch.append(m.welch.p_value)
        if bootstrap:
            boot.append(m.bootstrap.p_value)
    return np.array(welch), np.array(boot)


def test_intervals_cover_the_true_lift_quick(run_experiment):
    welch, boot = coverage(run_experiment, range(60), n=2000, bootstrap=200)
    assert 0.85 <= welch <= 1.0
    assert 0.85 <= boot <= 1.0


def test_a_too_narrow_interval_fails_the_coverage_band(run_experiment):
    """The check can fail: 50% intervals, read as if they were 95% ones, cover far too rarely."""
    welch, _ = coverage(run_experiment, range(30), n=1000, alpha=0.5)
    assert not 0.85 <= welch <= 1.0


def test_pvalues_are_uniform_under_no_effect_quick(run_experiment):
    p, _ = null_pvalues(run_experiment, range(200), n=1000)
    assert stats.kstest(p, "uniform").pvalue > 0.01
    assert 0.01 <= np.mean(p < 0.05) <= 0.11


def test_pvalues_under_an_effect_are_not_uniform(run_experiment):
    """The uniformity check can fail: with a real +30% lift the p-values pile up near 0."""
    seeds = range(40)
    p = [run_experiment(s, n_control=800, n_treatment=800, true_lift=0.3).metric("gmv")
         .welch.p_value for s in seeds]
    assert stats.kstest(p, "uniform").pvalue < 0.01


@pytest.mark.slow
def test_intervals_cover_the_true_lift_200_experiments(run_experiment):
    welch, boot = coverage(run_experiment, range(200), n=2000, bootstrap=1000)
    print(f"coverage over 200 experiments: welch {welch:.3f}, bootstrap {boot:.3f}")
    assert 0.90 <= welch <= 0.99
    assert 0.90 <= boot <= 0.99


@pytest.mark.slow
def test_pvalues_are_uniform_under_no_effect_400_experiments(run_experiment):
    welch, boot = null_pvalues(run_experiment, range(400), n=2000, bootstrap=500)
    ks = stats.kstest(welch, "uniform").pvalue
    print(f"null: KS p {ks:.3f}, rejections at 0.05: welch {np.mean(welch < 0.05):.3f}, "
          f"bootstrap {np.mean(boot < 0.05):.3f}")
    assert ks > 0.01
    assert 0.02 <= np.mean(welch < 0.05) <= 0.09
    assert 0.02 <= np.mean(boot < 0.05) <= 0.09
