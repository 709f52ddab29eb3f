"""MLflow tracking of one training stage (only when a tracking URI is given).

    tracking = StageTracking(uri="sqlite:///mlflow.db", experiment="hat-train", stage="sft")
    tracking.start(config, {"dataset": sha256})     # params, config + its hash, dataset hashes
    trainer.add_callback(tracking.callback())       # every logged step: loss, rewards/<fn>/mean ...
    tracking.finish(result)                         # final metrics, probe, the model files

It talks to MLflow through an `MlflowClient` bound to `uri` (no global active run), so several
stages of one pipeline can log side by side, optionally nested under `parent_run_id`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

MAX_PARAM = 500
# Trainer state beside the final model (resume only): never logged as the `model` artifact.
NOT_MODEL_FILES = ("optimizer.pt", "scheduler.pt", "rng_state*.pth", "training_args.bin")


def flatten(data: dict, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys."""
    out = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out |= flatten(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def numeric(logs: dict) -> dict[str, float]:
    """The finite numeric entries of a log record."""
    return {k: float(v) for k, v in logs.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


class _MetricsCallback(TrainerCallback):
    """Forwards every `Trainer` log record (each reward component too) to MLflow."""

    def __init__(self, tracking: StageTracking):
        self.tracking = tracking

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and state.is_world_process_zero:
            self.tracking.log_metrics(numeric(logs), step=state.global_step)


class StageTracking:
    """One MLflow run for one stage."""

    def __init__(self, uri: str, experiment: str, stage: str, run_name: str | None = None,
                 parent_run_id: str | None = None):
        from mlflow.tracking import MlflowClient

        self.client = MlflowClient(tracking_uri=uri)
        self.uri, self.stage = uri, stage
        self.experiment_id = self._experiment(experiment)
        self.run_name = run_name or f"{stage}"
        self.parent_run_id = parent_run_id
        self.run_id: str | None = None

    def _experiment(self, name: str) -> str:
        found = self.client.get_experiment_by_name(name)
        return found.experiment_id if found else self.client.create_experiment(name)

    def start(self, config, dataset_hashes: dict[str, str]) -> str:
        """Open the run; log the config as params and as `config.json`, and its hashes. A
        nested run that an interrupted attempt of the same stage opened is taken up again
        (one stage run per job, however often the stage was resumed)."""
        earlier = self._earlier_run(config.hash())
        if earlier is not None:
            self.run_id = earlier
            self.client.update_run(earlier, status="RUNNING")
            return earlier
        tags = {"hat.stage": self.stage, "hat.config_hash": config.hash()}
        tags |= {f"hat.dataset.{k}": v for k, v in dataset_hashes.items()}
        if self.parent_run_id:
            tags["mlflow.parentRunId"] = self.parent_run_id
        run = self.client.create_run(self.experiment_id, run_name=self.run_name, tags=tags)
        self.run_id = run.info.run_id
        params = flatten(config.to_dict()) | {"config_hash": config.hash()}
        params |= {f"dataset_hash.{k}": v for k, v in dataset_hashes.items()}
        from mlflow.entities import Param

        self.client.log_batch(self.run_id, params=[
            Param(k, str(v)[:MAX_PARAM]) for k, v in sorted(params.items())])
        self.client.log_text(self.run_id, json.dumps(config.to_dict(), indent=2,
                                                     ensure_ascii=False), "config.json")
        return self.run_id

    def _earlier_run(self, config_hash: str) -> str | None:
        if not self.parent_run_id:
            return None
        query = (f"tags.mlflow.parentRunId = '{self.parent_run_id}' and "
                 f"tags.`hat.stage` = '{self.stage}' and "
                 f"tags.`hat.config_hash` = '{config_hash}'")
        found = self.client.search_runs([self.experiment_id], query, max_results=1,
                                        order_by=["attributes.start_time ASC"])
        return found[0].info.run_id if found else None

    def callback(self) -> TrainerCallback:
        return _MetricsCallback(self)

    def log_metrics(self, metrics: dict[str, float], step: int = 0) -> None:
        from mlflow.entities import Metric

        if not metrics or self.run_id is None:
            return
        import time

        now = int(time.time() * 1000)
        self.client.log_batch(self.run_id, metrics=[
            Metric(_metric_name(k), v, now, step) for k, v in metrics.items()])

    def finish(self, result, log_model: bool = True) -> None:
        """Final metrics, the probe; the final model and the stage manifest (`model_files`) as
        the `model` artifact."""
        if self.run_id is None:
            return
        final = numeric(result.metrics) | {"global_step": float(result.steps)}
        if result.probe:
            final |= {f"probe/{k}": v for k, v in numeric(result.probe).items()}
        self.log_metrics(final, step=result.steps)
        if log_model:
            for file in model_files(Path(result.output_dir)):
                self.client.log_artifact(self.run_id, str(file), "model")
        self.client.set_terminated(self.run_id, "FINISHED")

    def fail(self) -> None:
        if self.run_id is not None:
            self.client.set_terminated(self.run_id, "FAILED")


def model_files(output_dir: Path) -> list[Path]:
    """The final model's files of a stage folder: not `checkpoints/` (weights + optimizer
    states of every saved step) nor trainer state files (`NOT_MODEL_FILES`)."""
    return [f for f in sorted(output_dir.iterdir()) if f.is_file()
            and not any(f.match(pattern) for pattern in NOT_MODEL_FILES)]


def _metric_name(name: str) -> str:
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-. /")
    return "".join(c if c in allowed else "_" for c in name)
