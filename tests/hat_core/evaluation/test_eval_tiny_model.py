"""A real (tiny, random) Qwen3 model through `TransformersBackend` + `BackendPolicy`: the
simulator suites run end to end and record whatever it says as judged cases."""

from __future__ import annotations

from hat_core.evaluation.badcases import ListBadCaseSink
from hat_core.evaluation.evaluate import EvalOptions, evaluate
from hat_core.evaluation.policy import BackendPolicy
from hat_core.inference.backends import TransformersBackend


def test_a_tiny_model_runs_t1_t2_and_cot_length(tiny_model_dir, v1_harness):
    policy = BackendPolicy(TransformersBackend(tiny_model_dir, device="cpu"), max_tokens=8)
    sink = ListBadCaseSink()
    report = evaluate(policy, v1_harness, ["t1", "t2", "cot_length"],
                      EvalOptions(episodes=1, variants=1, max_steps=1, max_tokens=8),
                      bad_cases=sink)
    t1, t2, cot = report.suites
    assert len(t1.rows) == 1 and len(t2.rows) == 1 and cot.summary["episodes"] == 1
    assert 0.0 <= t2.metrics["pass_rate"] <= 1.0 and "gap" in t2.metrics
    failed = [r for s in (t1, t2) for r in s.rows if not r["passed"]]
    assert len(sink.records) == len(failed)
    assert report.model.startswith("backend:")


def test_ifeval_rows_pair_across_models_by_prompt(tiny_model_dir, v1_harness):
    """IFEval rows carry a case id and the prompt-level strict verdict, so two models'
    runs compare on the same prompts (`hat eval compare --suites ifeval`)."""
    from hat_core.evaluation.evaluate import case_rows
    from hat_core.evaluation.paired import compare_cases

    policy = BackendPolicy(TransformersBackend(tiny_model_dir, device="cpu"), max_tokens=4)
    report = evaluate(policy, v1_harness, ["ifeval"], EvalOptions(limit=5, max_tokens=4))
    rows = case_rows(report)
    assert len(rows) == 5 and len({r["case_id"] for r in rows}) == 5
    assert [r["passed"] for r in rows] == [r["strict"] for r in rows]
    assert report.suites[0].metrics["ife_p"] == sum(r["passed"] for r in rows) / 5
    flipped = [r | {"passed": not r["passed"]} for r in rows]
    c = compare_cases(rows, flipped, metric="passed", suite="ifeval")
    assert c.n == 5 and c.a_only + c.b_only == 5
