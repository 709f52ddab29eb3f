"""The job page offers operators a Retry of a failed job (the job is queued again, its
history shows who retried); viewers see no button."""

from __future__ import annotations

from db.engine import in_transaction
from db.jobs_repo import get_job, transition_job


def test_an_operator_retries_a_failed_job_on_its_page(console, console_db, console_sessions):
    job_id = console_db[1]["job_running"]
    in_transaction(console_sessions, lambda s: transition_job(
        s, job_id=job_id, to="failed", reason="DataError: 0 rows kept"))
    viewer = console("viewer", "job")
    viewer.number_input(key="job_page_id").set_value(job_id).run()
    assert not viewer.exception
    assert not [b for b in viewer.button if b.key == "job_retry"]
    operator = console("operator", "job")
    operator.number_input(key="job_page_id").set_value(job_id).run()
    operator.button(key="job_retry").click().run()
    assert not operator.exception
    with console_sessions() as s:
        job = get_job(s, job_id=job_id)
    assert job.state == "queued" and job.retry_at is not None
    assert job.history[-1]["by"] == "operator"
    assert f"Job {job_id} is queued again" in operator.success[0].value
