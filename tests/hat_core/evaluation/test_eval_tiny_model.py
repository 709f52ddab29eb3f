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
