"""`t1` and `t2` with known outcomes: the oracle passes everything (directly and through the
chat adapter); a policy that always emits v1 names passes T1 and fails T2."""

from __future__ import annotations

import pytest
from eval_fakes import OracleBackend

from hat_core.errors import ConfigError
from hat_core.evaluation.badcases import ListBadCaseSink
from hat_core.evaluation.cases import eval_world, original_surface, variant_surfaces
from hat_core.evaluation.evaluate import EvalOptions, evaluate
from hat_core.evaluation.policy import BackendPolicy
from hat_core.evaluation.suites.qa import T1Suite, T2Suite
from hat_core.evaluation.suites.registry import get_suite
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.heldout import uses_heldout, uses_train
from hat_core.sim.batch import world
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy

EPISODES, VARIANTS = 15, 3


def test_the_oracle_scores_100_on_t1_and_t2(v1_harness):
    t1 = T1Suite().run(OraclePolicy(), v1_harness, episodes=EPISODES)
    t2 = T2Suite().run(OraclePolicy(), v1_harness, episodes=EPISODES, variants=VARIANTS)
    assert t1.metrics["pass_rate"] == 1.0 and t2.metrics["pass_rate"] == 1.0
    assert t2.metrics["gap"] == 0.0 and t2.metrics["t1_pass_rate"] == 1.0
    assert len(t1.rows) == EPISODES and len(t2.rows) == EPISODES * VARIANTS
    assert {r["kind"] for r in t1.rows} == {sc.kind for sc in eval_world(0, EPISODES)[1]}


def test_the_oracle_through_the_chat_adapter_scores_100(v1_harness):
    """Same numbers when the oracle answers through `InferenceBackend.chat` +
    `BackendPolicy`: the adapter loses nothing (tool calls, arguments, skill)."""
    catalog, scenarios = eval_world(0, EPISODES)
    surfaces = [original_surface(v1_harness),
                *variant_surfaces(v1_harness, VARIANTS, 0, HsaConfig(pool="heldout"))]
    backend = OracleBackend(surfaces, scenarios)
    policy = BackendPolicy(backend)
    t1 = T1Suite().run(policy, v1_harness, episodes=EPISODES)
    t2 = T2Suite().run(policy, v1_harness, episodes=EPISODES, variants=VARIANTS)
    assert t1.metrics["pass_rate"] == 1.0 and t2.metrics["pass_rate"] == 1.0
    assert t1.metrics["mean_skill_selection"] == 1.0 and backend.calls > 2 * EPISODES


def test_v1_names_score_high_on_t1_and_low_on_t2(v1_harness):
    sink = ListBadCaseSink()
    memorising = MemorisingPolicy(v1_harness)
    t1 = T1Suite().run(memorising, v1_harness, episodes=EPISODES)
    t2 = T2Suite().run(memorising, v1_harness, episodes=EPISODES, variants=VARIANTS,
                       bad_cases=sink)
    assert t1.metrics["pass_rate"] == 1.0
    assert t2.metrics["pass_rate"] < 0.7
    assert t2.metrics["gap"] == pytest.approx(1.0 - t2.metrics["pass_rate"])
    failed = [r for r in t2.rows if not r["passed"]]
    assert len(sink.records) == len(failed) > 0
    assert {r.failure_type for r in sink.records} <= {"wrong_tool", "wrong_arguments",
                                                      "wrong_skill", "hallucinated_fact"}
    assert t2.summary["failures"] == {k: sum(r.failure_type == k for r in sink.records)
                                      for k in t2.summary["failures"]}


def test_v1_names_through_the_adapter_fail_t2_too(v1_harness):
    catalog, scenarios = eval_world(0, EPISODES)
    surfaces = [original_surface(v1_harness),
                *variant_surfaces(v1_harness, VARIANTS, 0, HsaConfig(pool="heldout"))]
    policy = BackendPolicy(OracleBackend(surfaces, scenarios, memorised=v1_harness))
    t2 = T2Suite().run(policy, v1_harness, episodes=EPISODES, variants=VARIANTS)
    assert t2.metrics["t1_pass_rate"] == 1.0 and t2.metrics["pass_rate"] < 0.7


def test_t2_variants_come_from_the_heldout_pool(v1_harness):
    surfaces = variant_surfaces(v1_harness, 4, 0, HsaConfig(pool="heldout"))
    assert all(s.pool == "heldout" and not uses_train(s.variant) for s in surfaces)
    assert any(uses_heldout(s.variant) for s in surfaces)
    t2 = T2Suite().run(OraclePolicy(), v1_harness, episodes=3, variants=4)
    assert set(t2.summary["variants"]) == {"h000", "h001", "h002", "h003"}
    assert t2.summary["pool"] == "heldout"


def test_the_eval_world_is_not_a_training_world():
    catalog, evals = eval_world(0, 15)
    for seed in (0, 1, 2):
        train_catalog, train = world(seed, 15)
        assert catalog.products != train_catalog.products
        same = [a.kind for a, b in zip(evals, train, strict=True) if a.turns == b.turns]
        assert set(same) <= {"comment"}  # a comment's wording ignores the catalog
    assert eval_world(0, 15)[1] == evals  # deterministic


def test_evaluate_shares_t1_and_keeps_the_requested_order(v1_harness):
    report = evaluate(MemorisingPolicy(v1_harness), v1_harness, ["t2", "t1", "cot_length"],
                      EvalOptions(episodes=6, variants=2), model_name="mem")
    assert [r.suite for r in report.suites] == ["t2", "t1", "cot_length"]
    t2, t1, cot = report.suites
    assert t2.metrics["t1_pass_rate"] == t1.metrics["pass_rate"] == 1.0
    assert cot.summary["episodes"] == 6 and report.model == "mem"
    assert report.harness_hash == v1_harness.content_hash()


def test_limit_caps_episodes_and_errors_are_readable(v1_harness):
    assert len(get_suite("t1").run(OraclePolicy(), v1_harness, limit=2).rows) == 2
    with pytest.raises(ConfigError, match="needs a harness"):
        get_suite("t2").run(OraclePolicy(), None)
    with pytest.raises(ConfigError, match="needs a language model"):
        evaluate(OraclePolicy(), v1_harness, ["ifeval"])
    with pytest.raises(ConfigError, match="unknown suite"):
        evaluate(OraclePolicy(), v1_harness, ["t1", "t9"])


def test_the_metric_keys_the_blessing_gates_read(v1_harness):
    from hat_core.evaluation.evaluate import flat_metrics
    from hat_core.release.gates import DEFAULT_METRICS

    report = evaluate(MemorisingPolicy(v1_harness), v1_harness, ["t1", "t2"],
                      EvalOptions(episodes=6, variants=2))
    flat = flat_metrics(report)
    assert set(DEFAULT_METRICS.values()) - {"ifeval.ife_p"} <= set(flat)
    assert flat["t2.accuracy"] == flat["t2.pass_rate"]
    assert flat["t2.pass_rate"] == pytest.approx(1 - flat["t2.bad_case_rate"])
