"""An evaluation report logged to MLflow: one run, metrics `suite.metric`, files as artifacts.

    run_id = log_report(report, uri="sqlite:///mlflow.db", artifacts=[json_path, md_path])

Talks to MLflow through an `MlflowClient` bound to `uri` (no global active run). Params: the
model, the harness hash and the suites; tags: `hat.kind=eval`. `parent_run_id` nests the run
under a pipeline run (the retrain flow).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from hat_core.evaluation.evaluate import flat_metrics
from hat_core.evaluation.report import EvalReport


def log_report(report: EvalReport, *, uri: str, experiment: str = "hat-eval",
               artifacts: Iterable[str | Path] = (), run_name: str | None = None,
               parent_run_id: str | None = None, params: dict | None = None) -> str:
    """Log `report` as one finished MLflow run; its run id."""
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    exp_id = found.experiment_id if found else client.create_experiment(experiment)
    tags = {"hat.kind": "eval", "mlflow.runName": run_name or f"eval {report.model}"}
    if parent_run_id:
        tags["mlflow.parentRunId"] = parent_run_id
    run = client.create_run(exp_id, tags=tags)
    run_id, now = run.info.run_id, int(time.time() * 1000)
    all_params = {"model": report.model, "harness_hash": report.harness_hash or "-",
                  "suites": ",".join(r.suite for r in report.suites), **(params or {})}
    client.log_batch(
        run_id,
        metrics=[Metric(k, v, now, 0) for k, v in flat_metrics(report).items()],
        params=[Param(k, str(v)[:500]) for k, v in all_params.items()],
        tags=[RunTag("hat.created_at", report.created_at)])
    for path in artifacts:
        client.log_artifact(run_id, str(path))
    client.set_terminated(run_id)
    return run_id
