"""The pairwise page's second way to create a review, in a Streamlit AppTest on the seeded
console store: pick an evaluated checkpoint and the production baseline its job evaluated
beside it; the items come from a real eval stage run in the console's MLflow store (real
evaluations of the oracle and of a policy that memorised v1). Until a job has an eval stage
run the page says so; a bad pick shows the error and stores nothing."""

from __future__ import annotations

from pathlib import Path

from console_helpers import texts

from db.engine import in_transaction
from hat_core.evaluation.evaluate import EvalOptions, evaluate, write_cases
from hat_core.harness.io import load_harness
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy

HARNESSES = Path(__file__).resolve().parents[2] / "examples" / "harnesses"


def log_eval_stage(uri: str, tmp: Path) -> str:
    """An eval stage run as the retrain flow logs it: reports/{candidate,champion}.cases.jsonl."""
    from mlflow.tracking import MlflowClient

    reports = tmp / "reports"
    for name, policy in (("candidate", OraclePolicy()),
                         ("champion", MemorisingPolicy(load_harness(HARNESSES / "v1.yaml")))):
        report = evaluate(policy, load_harness(HARNESSES / "v2.yaml"), ["t1"],
                          EvalOptions(episodes=6, variants=1))
        write_cases(report, reports / f"{name}.cases.jsonl")
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("hat/live-shop", artifact_location=(tmp / "art").as_uri())
    run = client.create_run(exp)
    client.log_artifacts(run.info.run_id, str(reports), "reports")
    return run.info.run_id


def new_review(console):
    at = console("operator", "pairwise")
    at.radio(key="pw_mode").set_value("New review").run()
    return at.radio(key="pw_source").set_value("Evaluated checkpoints").run()


def test_create_a_review_from_an_evaluated_checkpoint(console, console_db, console_sessions,
                                                      tmp_path):
    from db.jobs_repo import add_stage_run
    from db.pairwise_repo import list_blind_items, list_pairwise_reviews
    from hat_core.settings import load_settings

    _, ids = console_db
    assert "No evaluated checkpoints yet" in texts(new_review(console))
    run_id = log_eval_stage(load_settings().resolved_mlflow_uri(), tmp_path)
    in_transaction(console_sessions, lambda s: add_stage_run(
        s, job_id=ids["job_good"], stage="eval", mlflow_run_id=run_id))
    at = new_review(console)
    at.text_input(key="pw_runs_title").set_value("v2 checkpoint vs production")
    assert at.selectbox(key="pw_runs_a").value == "live-stream-avatar v2"
    assert at.selectbox(key="pw_runs_b").value.startswith("production baseline")
    at.number_input(key="pw_runs_limit").set_value(4)
    at.text_input(key="pw_runs_seed").set_value("3")
    at.button(key="pw_runs_create").click().run()
    assert not at.exception, at.exception
    assert "Opened review #1 with 4 items." in texts(at)
    with console_sessions() as s:
        (review,) = list_pairwise_reviews(s)
        items = list_blind_items(s, review_id=review.id)
    assert review.title == "v2 checkpoint vs production" and len(items) == 4
    assert all(i.prompt.startswith("viewer") and "reply: " in i.response_left for i in items)


def test_the_same_checkpoint_twice_is_refused(console, console_db, console_sessions, tmp_path):
    from db.jobs_repo import add_stage_run
    from db.pairwise_repo import list_pairwise_reviews
    from hat_core.settings import load_settings

    _, ids = console_db
    run_id = log_eval_stage(load_settings().resolved_mlflow_uri(), tmp_path)
    in_transaction(console_sessions, lambda s: add_stage_run(
        s, job_id=ids["job_good"], stage="eval", mlflow_run_id=run_id))
    at = new_review(console)
    at.text_input(key="pw_runs_title").set_value("same")
    at.selectbox(key="pw_runs_b").set_value("live-stream-avatar v2")
    at.button(key="pw_runs_create").click().run()
    assert "system A and system B are the same checkpoint" in texts(at)
    with console_sessions() as s:
        assert list_pairwise_reviews(s) == []
