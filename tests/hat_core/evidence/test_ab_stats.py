"""The statistics of one A/B analysis, each against scipy/statsmodels or a hand computation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from hat_core.errors import ConfigError
from hat_core.evidence.ab import AbConfig, analyze
from hat_core.evidence.ab_data import validate_ab_frame
from hat_core.evidence.ab_render import ab_markdown, ab_table
from hat_core.evidence.cuped import cuped_adjust
from hat_core.evidence.lift import bootstrap_lift, welch_lift
from hat_core.evidence.multiplicity import adjust_pvalues
from hat_core.evidence.simulate import simulate_ab, true_lift_of
from hat_core.evidence.srm import srm_check
from hat_core.evidence.stability import day_lifts, summarize_days


def test_welch_lift_matches_a_hand_computed_delta_method():
    c, t = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 3.0, 4.0, 5.0, 6.0])
    est = welch_lift(c, t, alpha=0.05)
    assert est.lift == pytest.approx(4.0 / 2.5 - 1)
    # se^2 = s_t^2/(n_t m_c^2) + m_t^2 s_c^2/(n_c m_c^4) = 2.5/(5*6.25) + 16*(5/3)/(4*39.0625)
    se = math.sqrt(2.5 / 31.25 + 16 * (5 / 3) / 156.25)
    assert est.se == pytest.approx(se)
    assert est.ci_low == pytest.approx(0.6 - 1.959964 * se, abs=1e-6)
    assert est.p_value == pytest.approx(stats.ttest_ind(t, c, equal_var=False).pvalue)
    assert est.diff == pytest.approx(1.5)


def test_undefined_lift_is_nan_not_an_error():
    assert math.isnan(welch_lift(np.zeros(5), np.ones(5)).lift)
    assert math.isnan(welch_lift(np.ones(5), np.ones(5)).p_value)


def test_bootstrap_is_seeded_and_agrees_with_welch_on_large_samples():
    rng = np.random.default_rng(0)
    c, t = rng.lognormal(0, 1, 3000), 1.1 * rng.lognormal(0, 1, 3000)
    one = bootstrap_lift(c, t, n_resamples=400, rng=np.random.default_rng(7))
    two = bootstrap_lift(c, t, n_resamples=400, rng=np.random.default_rng(7))
    assert one == two
    w = welch_lift(c, t)
    assert one.ci_low == pytest.approx(w.ci_low, abs=0.015)
    assert one.ci_high == pytest.approx(w.ci_high, abs=0.015)
    assert one.se == pytest.approx(w.se, rel=0.15)
    assert one.p_value < 0.01 and w.p_value < 0.01


def test_bca_bootstrap_and_its_guards():
    rng = np.random.default_rng(1)
    c, t = rng.exponential(1, 300), rng.exponential(1.3, 300)
    bca = bootstrap_lift(c, t, n_resamples=300, rng=np.random.default_rng(0), method="BCa")
    assert bca.method == "bootstrap-BCa" and bca.ci_low < bca.lift < bca.ci_high
    with pytest.raises(ConfigError, match="unknown bootstrap method"):
        bootstrap_lift(c, t, rng=np.random.default_rng(0), method="basic")
    with pytest.raises(ConfigError, match="too slow"):
        bootstrap_lift(np.ones(30_000), np.ones(30_000), rng=np.random.default_rng(0),
                       method="BCa")


def test_srm_flags_a_52_48_split_of_100k_users():
    skewed = srm_check(52_000, 48_000)
    assert skewed.mismatch and skewed.p_value < 1e-30
    assert skewed.chi2 == pytest.approx(160.0)  # (2000^2 + 2000^2) / 50000
    assert not srm_check(50_100, 49_900).mismatch


def test_srm_with_the_reports_80_20_split():
    assert not srm_check(1_580_000, 395_000, expected_control_share=0.8).mismatch
    assert srm_check(1_580_000, 395_000, expected_control_share=0.5).mismatch
    assert srm_check(1_580_000, 400_000, expected_control_share=0.8).mismatch
    with pytest.raises(ConfigError):
        srm_check(10, 10, expected_control_share=1.0)


def test_holm_and_bh_match_statsmodels_on_a_hand_example():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005*4, 0.01*3, 0.03*2, 0.04*1 -> 0.02, 0.03, 0.06, 0.06 (monotone)
    assert adjust_pvalues(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: 0.005*4/1, 0.01*4/2, 0.03*4/3, 0.04*4/4 -> 0.02, 0.02, 0.04, 0.04
    assert adjust_pvalues(p, "fdr_bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust_pvalues(p, "none") == p
    assert math.isnan(adjust_pvalues([0.01, float("nan")], "holm")[1])
    for method in ("holm", "fdr_bh"):
        assert adjust_pvalues(p, method) == pytest.approx(multipletests(p, method=method)[1])
    with pytest.raises(ConfigError) as err:
        adjust_pvalues(p, "bonferonni")
    assert "one of holm, fdr_bh, none" in err.value.report()


def test_cuped_removes_the_explained_variance():
    rng = np.random.default_rng(2)
    x = rng.normal(10, 2, 4000)
    y = 3 + 0.5 * x + rng.normal(0, 1, 4000)  # corr^2 = 1 / (1 + 1) = 0.5
    adj_c, adj_t, cuped = cuped_adjust(y[:2000], x[:2000], y[2000:], x[2000:], "x_pre")
    assert cuped.theta == pytest.approx(0.5, abs=0.03)
    assert cuped.variance_reduction == pytest.approx(0.5, abs=0.03)
    assert adj_c.mean() == pytest.approx(y[:2000].mean(), abs=0.05)


def test_cuped_narrows_the_interval_only_when_the_covariate_correlates(run_experiment):
    def widths(rho):
        out = []
        for cuped in (False, True):
            report = run_experiment(5, n_control=3000, n_treatment=3000, true_lift=0.05,
                                    covariate_correlation=rho,
                                    config=AbConfig(bootstrap=0, stability=False, cuped=cuped))
            m = report.metric("gmv")
            out.append((m.welch.ci_high - m.welch.ci_low, m.cuped))
        return out

    (raw, _), (adjusted, cuped) = widths(0.9)
    assert cuped.variance_reduction > 0.15 and adjusted < 0.93 * raw
    (raw, _), (adjusted, cuped) = widths(0.0)
    assert abs(cuped.variance_reduction) < 0.01 and adjusted == pytest.approx(raw, rel=0.02)


def test_stability_sees_a_steady_effect_and_a_drifting_one():
    def stability(day_lift_values):
        frame = simulate_ab(4, n_control=6000, n_treatment=6000, days=5,
                            day_lifts=day_lift_values)
        data = validate_ab_frame(frame, metrics=["detail_page_views"])
        lifts = day_lifts(data.frame, "detail_page_views", data.days(), control="control",
                          treatment="treatment")
        return summarize_days(lifts, direction=1)

    steady = stability([0.15] * 5)
    assert steady.consistent_days == steady.estimable_days == 5
    assert steady.q_p_value > 0.05 and steady.q_df == 4
    drifting = stability([0.3, 0.15, 0.0, -0.1, -0.2])
    assert drifting.q_p_value < 1e-6 and drifting.i2 > 0.8
    assert 1 <= drifting.consistent_days <= 3


def test_true_lift_of_drifting_days_is_the_day_weighted_mean():
    assert true_lift_of(0.04) == 0.04
    assert true_lift_of(days=2, day_lifts=[0.1, 0.1]) == pytest.approx(0.1)


def test_report_to_dict_is_json_and_renders():
    frame = simulate_ab(6, n_control=800, n_treatment=200, true_lift=0.2, days=3)
    report = analyze(validate_ab_frame(frame), AbConfig(expected_split=0.8, bootstrap=200))
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert [m["metric"] for m in data["metrics"]] == ["gmv", "confirmed_receipt_gmv",
                                                      "detail_page_views"]
    views = data["metrics"][2]
    assert views["verdict"] == "positive" and views["p_adjusted"] >= views["welch"]["p_value"]
    assert views["cuped"]["covariate"] == "detail_page_views_pre"
    assert len(views["stability"]["days"]) == 3 and data["trustworthy"] is True
    text = ab_markdown(report)
    assert "| detail_page_views |" in text and "sample ratio ok" in text
    assert ab_table(report).row_count == 3


def test_holm_is_applied_across_the_reports_metrics(run_experiment):
    report = run_experiment(8, metrics=("gmv", "confirmed_receipt_gmv", "detail_page_views"),
                            n_control=500, n_treatment=500)
    raw = [m.welch.p_value for m in report.metrics]
    assert [m.p_adjusted for m in report.metrics] == pytest.approx(adjust_pvalues(raw, "holm"))


def test_settings_are_validated_with_every_problem():
    with pytest.raises(ConfigError) as err:
        AbConfig(alpha=1.5, expected_split=0, bootstrap=10)
    assert [p.path for p in err.value.problems] == ["alpha", "expected_split", "bootstrap"]
    with pytest.raises(ConfigError) as err:
        AbConfig(correction="bonf")
    assert "correction: one of holm, fdr_bh, none" in err.value.report()


def test_a_metric_that_is_zero_in_control_reports_nan_as_null():
    frame = simulate_ab(9, n_control=50, n_treatment=50, days=2)
    frame.loc[frame["arm"] == "control", "gmv"] = 0.0
    report = analyze(validate_ab_frame(frame, metrics=["gmv", "detail_page_views"]),
                     AbConfig(bootstrap=100))
    gmv = report.metric("gmv")
    assert math.isnan(gmv.welch.lift) and gmv.verdict == "inconclusive"
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["metrics"][0]["welch"]["lift"] is None
    assert data["metrics"][0]["p_adjusted"] is None
    assert "n/a" in ab_markdown(report)
