"""The judge gate in the retrain flow: `eval.judge` validated with the config, an LLM judge
refused as the job's own failure (`failed`, retried by an operator) before any MLflow run
started, and passed on enough agreeing labels in the real store; the rule judge (the
default) never queries the store."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flow_helpers import submit_variant

from db.badcases_repo import add_bad_case, label_bad_case
from db.engine import in_transaction
from db.flow_repo import claim_job
from db.job_retries import retry_job
from db.jobs_repo import get_job, list_jobs
from flows.config import EvalSettings, retrain_config_from_dict
from flows.retrain import eval_judge_gate, retrain, with_judge_endpoint
from hat_core.errors import ConfigError
from hat_core.evaluation.errors import JudgeGateError
from hat_core.settings import Settings

LLM = EvalSettings(judge="llm", judge_base_url="http://judge.invalid/v1", judge_model="j")
LABELS = ["wrong_tool", "hallucinated_fact", "compliance_breach", "no_answer"]


def test_the_judge_keys_are_validated_with_the_config():
    with pytest.raises(ConfigError) as exc:
        retrain_config_from_dict({"eval": {"judge": "gpt"}})
    assert "retrain.eval.judge: unknown judge 'gpt'; valid: rule, llm" in exc.value.report()
    with pytest.raises(ConfigError) as exc:
        retrain_config_from_dict({"eval": {"judge": "llm", "judge_source": "votes"}})
    assert "retrain.eval.judge_model" in exc.value.report()
    assert "valid: bad_cases, pairwise" in exc.value.report()
    config = retrain_config_from_dict({"eval": {"judge": "llm", "judge_model": "j"}})
    filled = with_judge_endpoint(config, Settings(teacher_endpoint="http://vllm:8000/v1"))
    assert filled.eval.judge_config().base_url == "http://vllm:8000/v1"
    assert retrain_config_from_dict({}).eval.judge == "rule"


def test_a_refused_judge_fails_the_job_and_a_retry_runs_it_again(
        prefect_harness, hat_env, store, tmp_path, mlflow_uri):
    """On the Prefect engine: the refusal is the job's own failure (`failed`, with the
    refusal), before any MLflow run; an operator's retry queues it and the next run, still
    refused, fails it again, counted as a second attempt."""
    from mlflow.tracking import MlflowClient

    version = submit_variant(store, 901, line="judge-gate")
    path = tmp_path / "retrain.yaml"
    path.write_text("eval:\n  judge: llm\n  judge_model: j\n"
                    "  judge_base_url: http://judge.invalid/v1\n", encoding="utf-8")

    def run():
        state = retrain(harness_version=version.number, line=version.line,
                        config_path=str(path), return_state=True)
        assert state.is_failed()
        with pytest.raises(JudgeGateError, match="kappa none, n 0; the gate needs kappa"):
            state.result()
        with store() as s:
            (job,) = list_jobs(s)
        return job

    job = run()
    assert (job.state, job.attempts, job.stage) == ("failed", 1, "")
    assert job.reason.startswith("judge gate refused: the judge gate refuses the LLM judge j")
    assert "kappa none, n 0" in job.reason
    assert MlflowClient(mlflow_uri).get_experiment_by_name("hat/judge-gate") is None
    in_transaction(store, lambda s: retry_job(s, job_id=job.id, actor="ann"))
    again = run()
    assert (again.id, again.state, again.attempts) == (job.id, "failed", 2)
    assert [h["to"] for h in again.history] == ["failed", "queued", "failed"]
    assert again.history[-1]["reason"].startswith("judge gate refused: ")


def test_a_refusal_leaves_a_job_another_run_holds_as_it_is(hat_env, store, tmp_path):
    """A refused run for a job that another run holds (a live lease) records nothing."""
    version = submit_variant(store, 903, line="judge-held")
    held = in_transaction(store, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner="other",
        lease=timedelta(minutes=5))).job
    path = tmp_path / "retrain.yaml"
    path.write_text("eval:\n  judge: llm\n  judge_model: j\n"
                    "  judge_base_url: http://judge.invalid/v1\n", encoding="utf-8")
    with pytest.raises(JudgeGateError):
        retrain.fn(harness_version=version.number, line=version.line, config_path=str(path))
    with store() as s:
        after = get_job(s, job_id=held.id)
    assert (after.state, after.reason, after.attempts) == ("running", "running: other", 1)


def test_the_gate_passes_on_agreeing_labels_and_the_rule_judge_skips_it(store):
    settings = Settings(judge_min_items=12)
    with pytest.raises(JudgeGateError):
        eval_judge_gate(store, LLM, settings)

    version = submit_variant(store, 902)

    def fill(s):
        for x in LABELS * 3:
            case = add_bad_case(s, episode={}, harness_version_id=version.id, failure_type=x)
            label_bad_case(s, bad_case_id=case.id, reviewer="rita", label=x,
                           review_state="confirmed")
    in_transaction(store, fill)
    decision = eval_judge_gate(store, LLM, settings)
    assert decision.passed and decision.n == 12 and decision.params()["judge.gate"] == "pass"
    assert eval_judge_gate(None, EvalSettings(), settings).judge == "rule"  # no store needed
