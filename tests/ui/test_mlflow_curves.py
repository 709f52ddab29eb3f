"""Reading a stage's reward curves back from a real MLflow store."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from db.values import StageRunInfo
from ui.views.mlflow_curves import stage_curves
from ui.views.runs import reward_points

pytestmark = pytest.mark.slow


def test_curves_from_an_mlflow_run(tmp_path):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    run = client.create_run(client.create_experiment("hat", str(tmp_path / "artifacts")))
    for step, value in ((0, 0.25), (10, 0.5), (20, 0.75)):
        client.log_metric(run.info.run_id, "rewards/accuracy/mean", value, step=step)
    stages = [StageRunInfo(1, 1, "hsa_rl", run.info.run_id, {}, "", datetime.now(UTC)),
              StageRunInfo(2, 1, "hsa_sft", "no-such-run", {}, "", datetime.now(UTC))]
    points, problems = stage_curves(uri, stages)
    assert reward_points(points) == [
        {"stage": "hsa_rl", "metric": "accuracy", "step": s, "value": v}
        for s, v in ((0, 0.25), (10, 0.5), (20, 0.75))]
    assert len(problems) == 1 and problems[0].startswith("hsa_sft: MLflow run no-such-run")
