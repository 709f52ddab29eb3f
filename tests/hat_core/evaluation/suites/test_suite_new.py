"""`new`: the kinds a harness adds over a previous one; T1 stratified over the harness's kinds.

v3 adds `bundle` over v2: the oracle passes every new case, a model that memorised v2 fails
them all; without a previous harness (or one that adds nothing) the suite says so and plays
nothing. T1 under v1 is the same as ever; under v3 it adds one stratum of bundle cases."""

from __future__ import annotations

import pytest

from hat_core.evaluation.cases import eval_world, harness_world
from hat_core.evaluation.evaluate import EvalOptions, evaluate
from hat_core.evaluation.suites.qa import T1Suite
from hat_core.evaluation.suites.registry import get_suite
from hat_core.harness.io import load_harness
from hat_core.release.evidence import outcome_of, paired_evidence
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy


@pytest.fixture(scope="module")
def v3(examples_dir):
    return load_harness(examples_dir / "v3.yaml")


def test_new_plays_the_added_kinds_and_pairs(v2_harness, v3):
    suite = get_suite("new")
    oracle = suite.run(OraclePolicy(), v3, previous=v2_harness, cases=12)
    stale = suite.run(MemorisingPolicy(v2_harness), v3, previous=v2_harness, cases=12)
    assert oracle.summary["new_kinds"] == ["bundle"] and len(oracle.rows) == 12
    assert {r["kind"] for r in oracle.rows} == {"bundle"}
    assert oracle.rows[0]["case_id"] == "new/original/s00000-bundle"
    assert oracle.metrics["pass_rate"] == 1.0 and stale.metrics["pass_rate"] == 0.0
    assert [r["case_id"] for r in oracle.rows] == [r["case_id"] for r in stale.rows]
    ev = paired_evidence(oracle.rows, stale.rows, outcome_of("new.accuracy"), tolerance=0.0,
                         min_cases=10, alpha=0.05)
    assert ev.verdict == "passed" and ev.candidate_only == 12


def test_default_size_is_30_and_limit_caps_it(v2_harness, v3):
    suite = get_suite("new")
    assert len(suite.run(OraclePolicy(), v3, previous=v2_harness).rows) == 30
    assert len(suite.run(OraclePolicy(), v3, previous=v2_harness, limit=5).rows) == 5


def test_nothing_new_is_reported_not_played(v1_harness, v2_harness, v3):
    suite = get_suite("new")
    alone = suite.run(OraclePolicy(), v3)
    same = suite.run(OraclePolicy(), v2_harness, previous=v1_harness)
    assert alone.rows == () and alone.metrics == {"cases": 0.0}
    assert "no previous harness" in alone.summary["nothing_new"]
    assert "adds no scenario kind" in same.summary["nothing_new"]


def test_evaluate_passes_the_previous_harness_to_new(v2_harness, v3):
    report = evaluate(OraclePolicy(), v3, ["new"],
                      EvalOptions(previous=v2_harness, new_cases=4))
    assert len(report.suites[0].rows) == 4


def test_t1_under_v1_is_unchanged_and_under_v3_is_stratified(v1_harness, v3):
    assert harness_world(v1_harness, 0, 15) == eval_world(0, 15)
    t1 = T1Suite().run(OraclePolicy(), v3, episodes=15)
    kinds = [r["kind"] for r in t1.rows]
    assert len(kinds) == 16 and kinds.count("bundle") == 1 and len(set(kinds)) == 16
    assert t1.metrics["pass_rate"] == 1.0
    assert [r["case_id"] for r in t1.rows[:15]] == [
        r["case_id"] for r in T1Suite().run(OraclePolicy(), v1_harness, episodes=15).rows]
