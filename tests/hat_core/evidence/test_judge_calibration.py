"""Judge calibration: per failure type, the gate, and kappa against a hand computation."""

from __future__ import annotations

import math

import pytest

from hat_core.evidence.calibration import calibrate, calibration_gate, label_agreement

HUMAN = ["pass"] * 6 + ["wrong_tool"] * 3 + ["no_answer"]
JUDGE = ["pass"] * 5 + ["wrong_tool"] + ["wrong_tool"] * 2 + ["pass", "no_answer"]


def test_kappa_against_a_hand_computation():
    c = calibrate(JUDGE, HUMAN)
    # observed agreement 8/10; chance: (6*6 + 3*3 + 1*1) / 100 = 0.46
    assert c.accuracy == pytest.approx(0.8)
    assert c.kappa == pytest.approx((0.8 - 0.46) / (1 - 0.46))
    assert c.confusion == ((5, 1, 0), (1, 2, 0), (0, 0, 1))  # rows human: pass, wrong_tool, ...


def test_per_label_agreement():
    by_label = {a.label: a for a in label_agreement(calibrate(JUDGE, HUMAN))}
    tool = by_label["wrong_tool"]
    assert (tool.n_human, tool.n_judge, tool.n_both) == (3, 3, 2)
    assert tool.recall == pytest.approx(2 / 3) and tool.precision == pytest.approx(2 / 3)
    # one-vs-rest 2x2 [[2, 1], [1, 6]]: po = 0.8, pe = 0.3*0.3 + 0.7*0.7 = 0.58
    assert tool.kappa == pytest.approx((0.8 - 0.58) / 0.42)
    assert by_label["no_answer"].kappa == pytest.approx(1.0)
    assert by_label["pass"].to_dict()["recall"] == pytest.approx(5 / 6)


def test_a_label_the_judge_never_uses_has_no_precision():
    c = calibrate(["pass", "pass", "pass"], ["pass", "pass", "wrong_skill"])
    skill = {a.label: a for a in label_agreement(c)}["wrong_skill"]
    assert skill.recall == 0.0 and math.isnan(skill.precision)
    assert skill.to_dict()["precision"] is None


def test_calibration_gate():
    good = calibrate(JUDGE * 20, HUMAN * 20)
    ok, reason = calibration_gate(good, min_kappa=0.6)
    assert ok and reason == f"kappa {good.kappa:.3f} >= 0.6 on 200 items"
    ok, reason = calibration_gate(good, min_kappa=0.7)
    assert not ok and reason.startswith("kappa 0.630 < 0.7 on 200 items")
    ok, reason = calibration_gate(calibrate(JUDGE, HUMAN), min_kappa=0.1)
    assert not ok and reason == "only 10 calibration items (need 100)"
