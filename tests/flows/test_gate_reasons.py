"""The retrain job's reasons after the zero-shot check and the gates: only a passed zero-shot
check spares the retrain, and an inconclusive candidate is named as such, not as the
challenger."""

from __future__ import annotations

from flows.retrain import candidate_reason, zero_shot_reason
from hat_core.release.gates import GateCheck, GateResults

PASS = GateCheck("t1", True, 0.9, 0.5, "ok")
FAIL = GateCheck("t1_floor", False, 0.0, 0.5, "below the floor")
UNSURE = GateCheck("t2", False, 0.0, 0.0, "too few cases", "inconclusive")


def test_only_a_passed_zero_shot_check_spares_the_retrain():
    assert zero_shot_reason(GateResults((PASS,))) == "zero-shot passed: no retrain needed"
    assert zero_shot_reason(GateResults((PASS, UNSURE))) == \
        "zero-shot inconclusive (t2 inconclusive): retrain needed"
    assert zero_shot_reason(GateResults((FAIL, UNSURE))) == \
        "zero-shot failed (t1_floor failed; t2 inconclusive): retrain needed"


def test_the_candidates_reason_names_its_verdict():
    assert candidate_reason("3", GateResults((PASS,))) == \
        "retrained: version 3 is the challenger"
    assert candidate_reason("3", GateResults((FAIL, UNSURE))) == \
        "retrained: version 3 failed gates (t1_floor failed; t2 inconclusive)"
    unsure = candidate_reason("3", GateResults((PASS, UNSURE)))
    assert unsure.startswith("retrained: version 3 is inconclusive on its gates (t2 "
                             "inconclusive): not the challenger")
    assert "admin override with a reason" in unsure
