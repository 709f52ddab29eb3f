"""The harness-edit check: bad-case rate before and after retraining, relative reduction."""

from __future__ import annotations

import pytest

from hat_core.evaluation.badcases import ListBadCaseSink
from hat_core.evaluation.edit_check import (
    BadCaseRate,
    EditCheck,
    edit_check,
    edit_check_many,
    relative_reduction,
)
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy


def test_relative_reduction_on_hand_made_numbers():
    assert relative_reduction(0.4, 0.1) == pytest.approx(0.75)
    assert relative_reduction(0.2, 0.2) == 0.0
    assert relative_reduction(0.1, 0.2) == pytest.approx(-1.0)  # got worse
    assert relative_reduction(0.0, 0.1) is None
    # the paper's HAT row: 51.7% fewer bad cases
    check = EditCheck(BadCaseRate(60, 200), BadCaseRate(29, 200))
    assert check.before_rate == 0.3 and check.after_rate == 0.145
    assert check.relative_reduction == pytest.approx(0.5167, abs=1e-4)
    assert check.metrics() == {"before_rate": 0.3, "after_rate": 0.145,
                               "relative_reduction": pytest.approx(0.5167, abs=1e-4)}


def test_pooled_rates_add_counts():
    pooled = BadCaseRate(3, 10, {"wrong_tool": 3}) + BadCaseRate(1, 30, {"wrong_tool": 1,
                                                                         "no_answer": 0})
    assert (pooled.bad, pooled.cases, pooled.rate) == (4, 40, 0.1)
    assert pooled.failures == {"wrong_tool": 4, "no_answer": 0}


def test_memorised_v1_then_retrained_on_v2(v1_harness, v2_harness):
    sink = ListBadCaseSink()
    check = edit_check(v1_harness, v2_harness, before=MemorisingPolicy(v1_harness),
                       after=OraclePolicy(), episodes=15, bad_cases=sink)
    assert check.before_rate > 0.2 and check.after_rate == 0.0
    assert check.relative_reduction == 1.0
    assert check.before.cases == check.after.cases == 15
    assert len(sink.records) == check.before.bad
    assert {r.suite for r in sink.records} == {"edit_before"}
    edit = check.edits[0]
    assert edit["new_hash"] == v2_harness.content_hash()
    assert sum(edit["diff_counts"].values()) > 0


def test_no_retraining_means_no_reduction(v1_harness, v2_harness):
    memorising = MemorisingPolicy(v1_harness)
    check = edit_check(v1_harness, v2_harness, before=memorising, after=memorising,
                       episodes=15)
    assert check.before_rate == check.after_rate > 0 and check.relative_reduction == 0.0


def test_several_edits_pool_their_counts(v1_harness, v2_harness):
    edits = [("v1->v2", v1_harness, v2_harness), ("v1->v1", v1_harness, v1_harness)]
    check = edit_check_many(edits, before=MemorisingPolicy(v1_harness),
                            after=OraclePolicy(), episodes=10)
    assert check.before.cases == 20 and check.after.bad == 0
    first, second = check.edits
    assert first["name"] == "v1->v2" and first["before_rate"] > 0
    assert second["before_rate"] == 0.0 and second["relative_reduction"] is None
    assert check.before.bad == round(first["before_rate"] * 10)
    assert check.to_dict()["relative_reduction"] == 1.0
