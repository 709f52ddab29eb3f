"""Metric curves of a job's stages read from MLflow (the runs the flows logged).

Only on demand (importing mlflow takes seconds): `stage_curves(tracking_uri, stages)` gives
the same long-form points as `ui.views.runs.curve_points` for every metric of each stage's run.
An unreachable store or an unknown run is reported, not raised.
"""

from __future__ import annotations

from db.values import StageRunInfo


def stage_curves(tracking_uri: str, stages: list[StageRunInfo]) -> tuple[list[dict], list[str]]:
    """({stage, metric, step, value} points, problems) from the stages' MLflow runs."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    points: list[dict] = []
    problems: list[str] = []
    for stage in stages:
        if not stage.mlflow_run_id:
            continue
        try:
            run = client.get_run(stage.mlflow_run_id)
            for key in sorted(run.data.metrics):
                points += [{"stage": stage.stage, "metric": key, "step": m.step,
                            "value": m.value}
                           for m in client.get_metric_history(stage.mlflow_run_id, key)]
        except MlflowException as exc:
            problems.append(f"{stage.stage}: MLflow run {stage.mlflow_run_id}: {exc.message}")
    return points, problems
