"""Blessing gates (`hat_core.release.gates`) on per-case rows: 0 against 0 is inconclusive,
too few cases too, a significant gain passes, a significant loss fails beyond the tolerance,
missing rows, latency, the zero-shot check and its floors, the round trip through a dict,
and config loading with its errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hat_core.errors import ConfigError
from hat_core.release.gates import (
    GateCheck,
    GateConfig,
    GateResults,
    evaluate_gates,
    evaluate_zero_shot,
    gate_config_from_dict,
    load_gate_config,
)

GATES_YAML = Path(__file__).resolve().parents[3] / "examples" / "configs" / "gates.yaml"
CONFIG = GateConfig()  # min_cases 30, alpha 0.05, tolerances 0.02 / 0.05 / 0.0
N = 40


def sim_rows(suite: str, passed: list[bool]) -> list[dict]:
    """Simulator case rows of one suite, as `write_cases` writes them."""
    return [{"case_id": f"{suite}/s{i:03d}", "suite": suite, "passed": ok,
             "calls": {"first_tool_right": ok, "first_call_exact": ok, "all_calls_exact": ok}}
            for i, ok in enumerate(passed)]


def ifeval_rows(strict: list[bool]) -> list[dict]:
    return [{"suite": "ifeval", "key": 1000 + i, "strict": ok, "loose": ok}
            for i, ok in enumerate(strict)]


def model(passed: list[bool]) -> list[dict]:
    """t1, t2 and ifeval rows with the same per-case outcomes."""
    return sim_rows("t1", passed) + sim_rows("t2", passed) + ifeval_rows(passed)


def outcomes(both: int, only_a: int, only_b: int, n: int = N) -> tuple[list[bool], list[bool]]:
    """Per-case outcomes of a (reference) and b (candidate) with the given discordant counts."""
    a = [True] * both + [True] * only_a + [False] * only_b
    b = [True] * both + [False] * only_a + [True] * only_b
    rest = n - len(a)
    return a + [False] * rest, b + [False] * rest


def by_name(results: GateResults) -> dict[str, GateCheck]:
    return {c.name: c for c in results.checks}


def test_a_gate_at_zero_against_zero_is_inconclusive_never_passed():
    zero = model([False] * N)
    results = evaluate_gates(zero, zero, zero, True, CONFIG)
    assert results.verdict == "inconclusive" and results.passed is False
    assert results.inconclusive == ("t1", "t2", "ife_p", "bad_case_rate")
    assert results.failed == () and by_name(results)["latency"].verdict == "passed"
    t1 = by_name(results)["t1"]
    assert (t1.passed, t1.value, t1.threshold) == (False, 0.0, 0.0)
    assert "0 against 0" in t1.reason
    assert t1.evidence["n"] == N and t1.evidence["p_value"] == 1.0


def test_a_significantly_better_candidate_passes_every_gate():
    a, b = outcomes(both=10, only_a=0, only_b=10)
    results = evaluate_gates(model(b), model(a), model(a), True, CONFIG)
    assert results.verdict == "passed" and results.passed
    assert set(by_name(results)) == {"t1", "t2", "ife_p", "bad_case_rate", "latency"}
    bad = by_name(results)["bad_case_rate"]
    assert (bad.value, bad.threshold) == (0.5, 0.75)  # lower is better: 20/40 vs 30/40 bad
    assert bad.evidence["diff_interval"][1] < 0


def test_the_paired_gate_against_a_hand_computation():
    # 40 cases: 20 both right, 8 only the candidate, 1 only the champion, 11 neither.
    # McNemar exact, two-sided, on the 9 discordant cases: 2 * (C(9,0) + C(9,1)) / 2^9;
    # Bonett-Price: p_b = 9/42, p_a = 2/42, half-width 1.96 * sqrt((p_b + p_a - d^2) / 42)
    a, b = outcomes(both=20, only_a=1, only_b=8)
    check = by_name(evaluate_gates(model(b), model(a), model(a), True, CONFIG))["t1"]
    assert check.verdict == "passed"
    assert check.evidence["p_value"] == pytest.approx(2 * (1 + 9) / 2**9)  # 0.0390625
    assert (check.value, check.threshold) == (28 / 40, 21 / 40)
    assert (check.evidence["candidate_only"], check.evidence["reference_only"]) == (8, 1)
    assert "lies above -0.02" in check.reason and "p = 0.0391" in check.reason
    d = 9 / 42 - 2 / 42
    half = 1.959964 * math.sqrt((11 / 42 - d * d) / 42)
    assert check.evidence["diff_interval"] == pytest.approx([d - half, d + half], abs=1e-6)
    assert check.evidence["test"] == "non-inferiority (Bonett-Price), margin 0.02"
    # the mirror image fails: 7/40 below the champion (p = 0.039), beyond the 0.02 tolerance
    worse = by_name(evaluate_gates(model(a), model(b), model(b), True, CONFIG))["t1"]
    assert worse.verdict == "failed" and worse.passed is False
    assert "loses more than the margin 0.02" in worse.reason
    # a significant loss beyond the margin fails even where the interval reaches above it
    a, b = outcomes(both=100, only_a=10, only_b=0, n=200)
    beyond = by_name(evaluate_gates(model(b), model(a), model(a), True,
                                    GateConfig(t1_tolerance=0.03)))["t1"]
    assert beyond.evidence["diff_interval"][1] > -0.03 and beyond.evidence["p_value"] < 0.05
    assert beyond.verdict == "failed"
    # 3 against 3: no evidence either way at a 0.02 margin (the interval is about +-0.12)
    a, b = outcomes(both=20, only_a=3, only_b=3)
    unsure = by_name(evaluate_gates(model(b), model(a), model(a), True, CONFIG))["t1"]
    assert unsure.verdict == "inconclusive"
    assert unsure.evidence["p_value"] == pytest.approx(1.0)
    assert "straddles -0.02" in unsure.reason
    # the same cases at a 0.15 margin: the interval lies above it
    loose = GateConfig(t1_tolerance=0.15)
    assert by_name(evaluate_gates(model(b), model(a), model(a), True, loose))["t1"].passed


def test_too_few_cases_is_inconclusive_even_when_the_test_is_significant():
    a, b = outcomes(both=5, only_a=0, only_b=10, n=20)
    check = by_name(evaluate_gates(model(b), model(a), model(a), True, CONFIG))["t2"]
    assert check.evidence["p_value"] < 0.05
    assert check.verdict == "inconclusive" and "too few cases: 20 < min_cases 30" in check.reason
    relaxed = GateConfig(min_cases=20)
    assert by_name(evaluate_gates(model(b), model(a), model(a), True, relaxed))["t2"].passed


def test_a_significant_loss_within_the_tolerance_passes():
    a, b = outcomes(both=100, only_a=10, only_b=0, n=200)  # 0.05 lower, p = 2 / 2^10
    loose = GateConfig(t1_tolerance=0.1)
    check = by_name(evaluate_gates(model(b), model(a), model(a), True, loose))["t1"]
    assert check.verdict == "passed" and "lies above -0.1" in check.reason
    strict = by_name(evaluate_gates(model(b), model(a), model(a), True, CONFIG))["t1"]
    assert strict.verdict == "failed"  # significant, and 0.05 is beyond 0.02


def test_missing_rows_fail_for_the_candidate_and_are_inconclusive_for_the_reference():
    a, b = outcomes(both=10, only_a=0, only_b=10)
    no_t2 = [r for r in model(b) if r["suite"] != "t2"]
    checks = by_name(evaluate_gates(no_t2, model(a), None, True, CONFIG))
    assert checks["t2"].verdict == "failed" and "was not measured" in checks["t2"].reason
    assert checks["ife_p"].verdict == "inconclusive"
    assert "nothing to pair with" in checks["ife_p"].reason
    other = [{**r, "case_id": r.get("case_id", "") + "-other"} for r in model(a)]
    unpaired = by_name(evaluate_gates(model(b), other, model(a), True, CONFIG))["t1"]
    assert unpaired.verdict == "inconclusive"
    assert "do not cover the same cases" in unpaired.reason


def test_unmeasured_latency_fails_only_when_required():
    a, b = outcomes(both=10, only_a=0, only_b=10)
    assert by_name(evaluate_gates(model(b), model(a), model(a), None, CONFIG))["latency"] \
        .verdict == "failed"
    relaxed = GateConfig(require_latency=False)
    assert evaluate_gates(model(b), model(a), model(a), None, relaxed).passed
    failed = evaluate_gates(model(b), model(a), model(a), False, CONFIG)
    assert failed.verdict == "failed" and failed.failed == ("latency",)


def test_failed_beats_inconclusive_in_the_candidates_verdict():
    zero = model([False] * N)
    results = evaluate_gates(zero, zero, zero, False, CONFIG)
    assert results.verdict == "failed"
    assert results.summary() == "latency failed; t1, t2, ife_p, bad_case_rate inconclusive"
    assert GateResults(()).verdict == "inconclusive"


def test_zero_shot_pairs_the_new_harness_with_the_reference_cases():
    zero = model([False] * N)
    results = evaluate_zero_shot(zero, zero, CONFIG)
    assert [c.name for c in results.checks] == ["t1", "t2", "bad_case_rate"]
    assert results.verdict == "inconclusive"  # 0 against 0 shows nothing, at any margin
    assert "0 against 0" in results.checks[0].reason
    wide = GateConfig(zero_shot_margin=0.5)
    assert evaluate_zero_shot(zero, zero, wide).verdict == "inconclusive"
    a, b = outcomes(both=20, only_a=0, only_b=0)
    # identical on 40 cases: the interval of the change is about +-0.066, so it copes
    # within a 0.10 margin but is no evidence for the default 0.05
    same = evaluate_zero_shot(model(a), model(b), CONFIG)
    assert same.verdict == "inconclusive" and "straddles -0.05" in same.checks[0].reason
    # ... and says so: 40 cases can never show it, 54 can (z * sqrt(2) / 56 < 0.05)
    assert "40 paired cases cannot show it" in same.checks[0].reason
    assert "at least 54 can" in same.checks[0].reason
    a54, b54 = outcomes(both=27, only_a=0, only_b=0, n=54)
    assert evaluate_zero_shot(model(a54), model(b54), CONFIG).passed
    a53, b53 = outcomes(both=27, only_a=0, only_b=0, n=53)
    assert evaluate_zero_shot(model(a53), model(b53), CONFIG).verdict == "inconclusive"
    tenth = GateConfig(zero_shot_margin=0.10)
    assert evaluate_zero_shot(model(a), model(b), tenth).passed
    evidence = evaluate_zero_shot(model(a), model(b), tenth).checks[0].evidence
    assert evidence["test"] == "non-inferiority (Bonett-Price), margin 0.1"
    assert evidence["diff_interval"][0] == pytest.approx(-evidence["diff_interval"][1])
    worse_a, worse_b = outcomes(both=10, only_a=12, only_b=0)
    broke = evaluate_zero_shot(model(worse_b), model(worse_a), CONFIG)
    assert broke.verdict == "failed" and broke.failed == ("t1", "t2", "bad_case_rate")
    assert "lies below -0.05" in broke.checks[0].reason
    # the bad-case rate's interval is the change of the bad cases: the other way round
    t1, bad = broke.checks[0].evidence, broke.checks[2].evidence
    assert bad["diff_interval"] == pytest.approx([-x for x in reversed(t1["diff_interval"])])
    better = evaluate_zero_shot(model(outcomes(10, 0, 12)[1]), model(outcomes(10, 0, 12)[0]),
                                CONFIG)
    assert better.passed
    no_reference = evaluate_zero_shot(model(a), None, CONFIG)
    assert no_reference.verdict == "inconclusive"
    few = evaluate_zero_shot(model(a), model(b), GateConfig(min_cases=41, zero_shot_margin=0.1))
    assert few.verdict == "inconclusive" and "too few cases" in few.checks[0].reason


def test_zero_shot_floors_fail_a_model_that_scores_low_on_both_harnesses():
    low = model([True] * 12 + [False] * 28)  # 0.3
    floors = GateConfig(zero_shot_min_t1=0.5, zero_shot_min_t2=0.25)
    results = evaluate_zero_shot(low, low, floors)
    assert results.failed == ("t1_floor",) and results.verdict == "failed"
    assert [c.threshold for c in results.checks[-2:]] == [0.5, 0.25]
    assert "0.300 < the floor 0.500" in results.checks[-2].reason
    assert len(evaluate_zero_shot(low, low, CONFIG).checks) == 3  # no floor by default
    unmeasured = evaluate_zero_shot([r for r in low if r["suite"] != "t1"], low, floors)
    assert "t1_floor" in unmeasured.failed


def test_results_round_trip_through_a_dict_with_their_verdicts():
    zero = model([False] * N)
    results = evaluate_gates(zero, zero, zero, True, CONFIG)
    data = results.to_dict()
    assert data["passed"] is False and data["verdict"] == "inconclusive"
    assert data["gates"]["t1"]["verdict"] == "inconclusive"
    assert data["gates"]["t1"]["evidence"]["min_cases"] == 30
    assert GateResults.from_dict(data) == results


def test_results_stored_before_verdicts_read_as_passed_or_failed():
    old = {"passed": False, "gates": {
        "t1": {"name": "t1", "passed": True, "value": 0.8, "threshold": 0.78, "reason": "ok"},
        "t2": {"name": "t2", "passed": False, "value": 0.5, "threshold": 0.7, "reason": "no"}}}
    results = GateResults.from_dict(old)
    assert [c.verdict for c in results.checks] == ["passed", "failed"]
    assert results.verdict == "failed"


def test_a_check_whose_verdict_contradicts_passed_is_a_bug():
    with pytest.raises(ValueError, match="verdict 'inconclusive' with passed=True"):
        GateCheck("t1", True, 0.0, 0.0, "x", "inconclusive")
    with pytest.raises(ValueError, match="verdicts: passed, failed, inconclusive"):
        GateCheck("t1", False, 0.0, 0.0, "x", "maybe")


def test_the_example_config_loads():
    config = load_gate_config(GATES_YAML)
    assert (config.min_cases, config.alpha) == (30, 0.05)
    assert config.t1_tolerance == 0.02 and config.require_latency is True
    assert config.metrics["ife_p"] == "ifeval.ife_p"


def test_custom_metric_keys_read_their_per_case_outcome():
    config = gate_config_from_dict({"metrics": {"t1": "t1.first_call_exact"}})
    assert config.metrics["t1"] == "t1.first_call_exact" and config.metrics["t2"] == "t2.accuracy"
    a, b = outcomes(both=10, only_a=0, only_b=10)
    cand = model(b)
    for row in cand:  # the candidate passes but never makes an exact first call
        if row["suite"] == "t1":
            row["calls"] = {**row["calls"], "first_call_exact": False}
    t1 = by_name(evaluate_gates(cand, model(a), model(a), True, config))["t1"]
    assert t1.verdict == "failed" and t1.value == 0.0
    assert "t1.first_call_exact 0.000 vs 0.250" in t1.reason


def test_min_cases_alpha_and_metric_errors_name_the_key_and_the_valid_options():
    with pytest.raises(ConfigError) as err:
        gate_config_from_dict({"min_cases": 0, "alpha": 1.5,
                               "metrics": {"t1": "t1.latency_ms", "t2": "accuracy"}},
                              where="retrain.yaml:gates")
    report = err.value.report()
    assert "retrain.yaml:gates.min_cases: must be a whole number of cases >= 1, got 0" in report
    assert "retrain.yaml:gates.alpha: must be a significance level in (0, 1)" in report
    assert ("retrain.yaml:gates.metrics.t1: 't1.latency_ms' has no per-case outcome to pair; "
            "write SUITE.METRIC with METRIC one of accuracy, pass_rate, bad_case_rate, ife_p"
            in report)
    assert "retrain.yaml:gates.metrics.t2: 'accuracy' has no per-case outcome" in report
    assert len(err.value.problems) == 4
    with pytest.raises(ConfigError) as err:
        gate_config_from_dict({"min_cases": "many"})
    assert "gates.min_cases" in err.value.report()


def test_bad_config_lists_every_problem_and_the_valid_keys():
    with pytest.raises(ConfigError) as err:
        gate_config_from_dict({"t1_tolerence": 0.1, "t2_tolerance": 2, "require_latency": "yes",
                               "metrics": {"t9": "x"}})
    report = err.value.report()
    assert "gates.t1_tolerence: unknown key; valid keys: min_cases, alpha, t1_tolerance" \
        in report
    assert "gates.t2_tolerance: must be a number in [0, 1], got 2" in report
    assert "gates.require_latency" in report
    assert "gates.metrics.t9: unknown key; valid keys: t1, t2, ife_p" in report
    assert len(err.value.problems) == 4


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="no such gate config file"):
        load_gate_config(tmp_path / "none.yaml")


def test_ife_p_reference_is_the_base_or_the_champion():
    assert GateConfig().ife_p_reference == "base"
    assert gate_config_from_dict({"ife_p_reference": "champion"}).ife_p_reference == "champion"
    with pytest.raises(ConfigError) as bad:
        gate_config_from_dict({"ife_p_reference": "teacher"})
    assert "must be one of base, champion, got 'teacher'" in str(bad.value.problems)
