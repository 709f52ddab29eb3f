"""Blessing gates (`hat_core.release.gates`): every gate passing, failing at its edge, missing
metrics, latency, the zero-shot subset, and config loading with its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hat_core.errors import ConfigError
from hat_core.release.gates import (
    GateConfig,
    GateResults,
    evaluate_gates,
    evaluate_zero_shot,
    gate_config_from_dict,
    load_gate_config,
)

GATES_YAML = Path(__file__).resolve().parents[3] / "examples" / "configs" / "gates.yaml"
CHAMPION = {"t1.accuracy": 0.80, "t2.accuracy": 0.75, "t2.bad_case_rate": 0.20}
BASE = {"ifeval.ife_p": 0.60}
CONFIG = GateConfig(t1_tolerance=0.02, t2_tolerance=0.02, ife_p_margin=0.05,
                    bad_case_tolerance=0.0)


def good(**changes) -> dict:
    metrics = {"t1.accuracy": 0.85, "t2.accuracy": 0.80, "t2.bad_case_rate": 0.10,
               "ifeval.ife_p": 0.62}
    return metrics | changes


def by_name(results: GateResults) -> dict:
    return {c.name: c for c in results.checks}


def test_a_better_candidate_passes_every_gate():
    results = evaluate_gates(good(), CHAMPION, BASE, True, CONFIG)
    assert results.passed and results.failed == ()
    assert set(by_name(results)) == {"t1", "t2", "ife_p", "bad_case_rate", "latency"}


@pytest.mark.parametrize(("metric", "value", "gate", "passed"), [
    ("t1.accuracy", 0.78, "t1", True),      # exactly the tolerance below the champion
    ("t1.accuracy", 0.7799, "t1", False),
    ("t2.accuracy", 0.73, "t2", True),
    ("t2.accuracy", 0.7299, "t2", False),
    ("ifeval.ife_p", 0.55, "ife_p", True),  # exactly the margin below the base
    ("ifeval.ife_p", 0.5499, "ife_p", False),
    ("t2.bad_case_rate", 0.20, "bad_case_rate", True),
    ("t2.bad_case_rate", 0.2001, "bad_case_rate", False),
])
def test_each_gate_at_its_threshold(metric, value, gate, passed):
    results = evaluate_gates(good(**{metric: value}), CHAMPION, BASE, True, CONFIG)
    check = by_name(results)[gate]
    assert check.passed is passed
    assert results.passed is passed
    assert check.value == value
    assert check.threshold == pytest.approx({"t1": 0.78, "t2": 0.73, "ife_p": 0.55,
                                             "bad_case_rate": 0.20}[gate])
    assert metric in check.reason


def test_failed_gates_are_listed_with_reasons():
    results = evaluate_gates(good(**{"t1.accuracy": 0.5, "ifeval.ife_p": 0.1}), CHAMPION, BASE,
                             False, CONFIG)
    assert results.failed == ("t1", "ife_p", "latency")
    assert "below" in by_name(results)["t1"].reason
    assert by_name(results)["latency"].reason == "the latency profile failed"


def test_a_metric_that_was_not_measured_fails_its_gate():
    candidate = good()
    del candidate["t2.accuracy"]
    check = by_name(evaluate_gates(candidate, CHAMPION, BASE, True, CONFIG))["t2"]
    assert not check.passed and "not measured" in check.reason
    no_ref = by_name(evaluate_gates(good(), {}, BASE, True, CONFIG))["t1"]
    assert not no_ref.passed and "no reference" in no_ref.reason


def test_unmeasured_latency_fails_only_when_required():
    assert not evaluate_gates(good(), CHAMPION, BASE, None, CONFIG).passed
    relaxed = GateConfig(require_latency=False)
    assert evaluate_gates(good(), CHAMPION, BASE, None, relaxed).passed


def test_zero_shot_uses_t1_t2_and_bad_cases_only():
    results = evaluate_zero_shot({"t1.accuracy": 0.79, "t2.accuracy": 0.74,
                                  "t2.bad_case_rate": 0.2}, CHAMPION, CONFIG)
    assert results.passed and [c.name for c in results.checks] == ["t1", "t2", "bad_case_rate"]
    worse = evaluate_zero_shot({"t1.accuracy": 0.5, "t2.accuracy": 0.74,
                                "t2.bad_case_rate": 0.2}, CHAMPION, CONFIG)
    assert worse.failed == ("t1",)


def test_zero_shot_floors_fail_a_model_that_scores_low_on_both_harnesses():
    low = {"t1.accuracy": 0.3, "t2.accuracy": 0.6, "t2.bad_case_rate": 0.2}
    same = {"t1.accuracy": 0.3, "t2.accuracy": 0.6, "t2.bad_case_rate": 0.2}
    assert evaluate_zero_shot(low, same, CONFIG).passed  # no floor by default
    floors = GateConfig(zero_shot_min_t1=0.5, zero_shot_min_t2=0.5)
    results = evaluate_zero_shot(low, same, floors)
    assert results.failed == ("t1_floor",)
    assert [c.threshold for c in results.checks[-2:]] == [0.5, 0.5]
    assert "0.300 < the floor 0.500" in results.checks[-2].reason
    unmeasured = evaluate_zero_shot({"t2.accuracy": 0.6}, same, floors)
    assert "t1_floor" in unmeasured.failed


def test_floor_settings_are_checked():
    with pytest.raises(ConfigError) as err:
        gate_config_from_dict({"zero_shot_min_t1": 1.5})
    assert "zero_shot_min_t1" in str(err.value.problems)


def test_results_round_trip_through_a_dict():
    results = evaluate_gates(good(**{"t1.accuracy": 0.1}), CHAMPION, BASE, True, CONFIG)
    data = results.to_dict()
    assert data["passed"] is False and data["gates"]["t1"]["passed"] is False
    assert GateResults.from_dict(data) == results


def test_the_example_config_loads():
    config = load_gate_config(GATES_YAML)
    assert config.t1_tolerance == 0.02 and config.require_latency is True
    assert config.metrics["ife_p"] == "ifeval.ife_p"


def test_custom_metric_keys_are_read():
    config = gate_config_from_dict({"metrics": {"t1": "live.acc"}})
    assert config.metrics["t1"] == "live.acc" and config.metrics["t2"] == "t2.accuracy"
    candidate = good(**{"live.acc": 0.9})
    assert by_name(evaluate_gates(candidate, {**CHAMPION, "live.acc": 0.9}, BASE, True,
                                  config))["t1"].passed


def test_bad_config_lists_every_problem_and_the_valid_keys():
    with pytest.raises(ConfigError) as err:
        gate_config_from_dict({"t1_tolerence": 0.1, "t2_tolerance": 2, "require_latency": "yes",
                               "metrics": {"t9": "x"}})
    report = err.value.report()
    assert "gates.t1_tolerence: unknown key; valid keys: t1_tolerance" in report
    assert "gates.t2_tolerance: must be a number in [0, 1], got 2" in report
    assert "gates.require_latency" in report
    assert "gates.metrics.t9: unknown key; valid keys: t1, t2, ife_p" in report
    assert len(err.value.problems) == 4


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="no such gate config file"):
        load_gate_config(tmp_path / "none.yaml")
