"""MLflow layout of the retrain service: an experiment per harness line, a parent run per
retrain job, nested runs per stage, and the registered model with its aliases.

Every call is idempotent so that a resumed flow run never logs or registers twice: the
parent run is found by its `hat.job_key` tag, a stage run by (`hat.job_key`, `hat.stage`),
and a model version by its `hat.job_key` tag.

    t = Tracking("sqlite:///.hat/mlflow.db", Path(".hat/mlartifacts"))
    parent = t.parent_run("live-shop", "harness-live-shop-3", {"hat.trigger": "harness-change"})
    stage = t.stage_run(parent, "sft", params={...}, metrics={...}, artifacts={"model": dir})
    version = t.register(parent, "hat-agent", model_dir, {"hat.gates_passed": "true"})
    t.set_alias("hat-agent", "challenger", version)

Stage folders are logged without their trainer checkpoints (`checkpoints/`, `checkpoint-*`:
weights plus optimizer states, several times the model): only the final model and reports.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlflow.entities import Metric, Param, RunTag
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from hat_core.release.registry import ModelRegistry
from hat_core.release.rules import CHALLENGER, CHAMPION, PREVIOUS

__all__ = ["CHALLENGER", "CHAMPION", "PREVIOUS", "Tracking", "experiment_name"]
JOB_KEY, STAGE = "hat.job_key", "hat.stage"
CHECKPOINT_PATH, MODEL_PATH = "checkpoint", "model"
CHECKPOINT_TAG = "hat.checkpoint_uri"  # the bare folder beside the registered MLflow model
# Trainer checkpoints (weights + optimizer states) beside a stage's final model: never logged.
SKIPPED_DIRS = ("checkpoints", "checkpoint-*")


def experiment_name(line: str) -> str:
    """The experiment of a harness line."""
    return f"hat/{line}"


@dataclass
class Tracking(ModelRegistry):
    """An MLflow tracking store and where new experiments keep their artifacts (None: the
    server's default, for `http(s)://` stores); the registry aliases come from
    `ModelRegistry`."""

    tracking_uri: str
    artifact_root: Path | None = None

    def __post_init__(self) -> None:
        self.client = MlflowClient(tracking_uri=self.tracking_uri,
                                   registry_uri=self.tracking_uri)

    def experiment_id(self, line: str) -> str:
        """The experiment of `line`, created on first use."""
        name = experiment_name(line)
        found = self.client.get_experiment_by_name(name)
        if found is not None:
            return found.experiment_id
        location = None
        if self.artifact_root is not None:
            location = (self.artifact_root / line).resolve().as_uri()
        try:
            return self.client.create_experiment(name, artifact_location=location)
        except MlflowException:  # created concurrently by another process
            return self.client.get_experiment_by_name(name).experiment_id

    def parent_run(self, line: str, job_key: str, tags: dict[str, str]) -> str:
        """The run id of the job's parent run (found by its job key, else created)."""
        experiment = self.experiment_id(line)
        found = self._find_runs(experiment, f"tags.`{JOB_KEY}` = '{job_key}'")
        parents = [r for r in found if STAGE not in r.data.tags]
        if parents:
            return parents[0].info.run_id
        run = self.client.create_run(
            experiment, run_name=job_key, tags={JOB_KEY: job_key, **tags})
        return run.info.run_id

    def stage_run(
        self,
        parent_run_id: str,
        stage: str,
        *,
        params: dict[str, Any] | None = None,
        metrics: dict[str, float] | None = None,
        artifacts: dict[str, Path] | None = None,
        tags: dict[str, str] | None = None,
    ) -> str:
        """Log one finished stage as a nested run of `parent_run_id` (once per stage). A run
        of the stage left unfinished (the store went away, or the worker was stopped, while
        it was logged) is logged again and finished, not duplicated."""
        parent = self.client.get_run(parent_run_id)
        job_key = parent.data.tags[JOB_KEY]
        query = f"tags.`{JOB_KEY}` = '{job_key}' and tags.`{STAGE}` = '{stage}'"
        existing = self._find_runs(parent.info.experiment_id, query)
        if existing and existing[0].info.status == "FINISHED":
            return existing[0].info.run_id
        run_id = existing[0].info.run_id if existing else self.client.create_run(
            parent.info.experiment_id, run_name=stage,
            tags={"mlflow.parentRunId": parent_run_id, JOB_KEY: job_key, STAGE: stage,
                  **(tags or {})}).info.run_id
        self.log(run_id, params=params, metrics=metrics, artifacts=artifacts, tags=tags)
        self.client.set_terminated(run_id, "FINISHED")
        return run_id

    def log(
        self,
        run_id: str,
        *,
        params: dict[str, Any] | None = None,
        metrics: dict[str, float] | None = None,
        artifacts: dict[str, Path] | None = None,
        tags: dict[str, str] | None = None,
    ) -> None:
        """Params (flattened, as strings), metrics, tags and files/folders of a run."""
        flat = _flatten(params or {})
        self.client.log_batch(
            run_id,
            metrics=[Metric(_key(k), float(v), _now_ms(), 0) for k, v in (metrics or {}).items()
                     if isinstance(v, int | float) and not isinstance(v, bool)],
            params=[Param(_key(k), str(v)[:6000]) for k, v in flat.items()],
            tags=[RunTag(k, str(v)) for k, v in (tags or {}).items()],
        )
        for name, path in (artifacts or {}).items():
            self.log_folder(run_id, Path(path), name)

    def log_folder(self, run_id: str, path: Path, name: str) -> None:
        """A file, or a folder without its trainer checkpoints (`SKIPPED_DIRS`), as `name`."""
        if path.is_file():
            self.client.log_artifact(run_id, str(path), name)
        elif path.is_dir() and not any(_skipped(c) for c in path.iterdir()):
            self.client.log_artifacts(run_id, str(path), name)
        elif path.is_dir():
            for child in sorted(path.iterdir()):
                if not _skipped(child):
                    self.log_folder(run_id, child, name if child.is_file()
                                    else f"{name}/{child.name}")

    def log_json(self, run_id: str, name: str, data: Any) -> None:
        """Store `data` as the JSON artifact `name` of a run."""
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / name
            path.write_text(json.dumps(data, ensure_ascii=False, indent=2, default=str),
                            encoding="utf-8")
            self.client.log_artifact(run_id, str(path))

    def finish(self, run_id: str, status: str = "FINISHED") -> None:
        """Close a run (`FINISHED`, `FAILED` or `KILLED`)."""
        self.client.set_terminated(run_id, status)

    def register(
        self, parent_run_id: str, registry_name: str, model_dir: Path, tags: dict[str, str]
    ) -> str:
        """Register the checkpoint as a version of `registry_name` (once per job): an MLflow
        transformers model (`flows.model_flavour`) when the folder loads as one, else the
        bare folder; the folder itself is logged too (tag `hat.checkpoint_uri`). The version
        carries the parent run's `hat.*` tags (harness line and version, dataset hash ...),
        the job key and `tags` (gates). Returns the version number as a string."""
        from flows.model_flavour import save_chat_model

        parent = self.client.get_run(parent_run_id)
        job_key = parent.data.tags[JOB_KEY]
        self.ensure_model(registry_name)
        for mv in self.client.search_model_versions(f"name = '{registry_name}'"):
            if mv.tags.get(JOB_KEY) == job_key:
                return str(mv.version)
        self.log_folder(parent_run_id, Path(model_dir), CHECKPOINT_PATH)
        checkpoint = f"runs:/{parent_run_id}/{CHECKPOINT_PATH}"
        source = checkpoint
        with tempfile.TemporaryDirectory() as tmp:
            if save_chat_model(Path(model_dir), Path(tmp) / MODEL_PATH):
                self.client.log_artifacts(parent_run_id, str(Path(tmp) / MODEL_PATH),
                                          MODEL_PATH)
                source = f"runs:/{parent_run_id}/{MODEL_PATH}"
        lineage = {k: v for k, v in parent.data.tags.items() if k.startswith("hat.")}
        mv = self.client.create_model_version(
            registry_name, source=source, run_id=parent_run_id,
            tags={**lineage, JOB_KEY: job_key, CHECKPOINT_TAG: checkpoint, **tags})
        return str(mv.version)

    def model_source_dir(self, registry_name: str, version: str) -> Path:
        """A local copy of a registered version's checkpoint folder."""
        from mlflow.artifacts import download_artifacts

        mv = self.client.get_model_version(registry_name, str(version))
        uri = mv.tags.get(CHECKPOINT_TAG) or self.client.get_model_version_download_uri(
            registry_name, str(version))
        return Path(download_artifacts(artifact_uri=uri, tracking_uri=self.tracking_uri))

    def download_cases(self, artifact_uri: str, dst: Path) -> str | None:
        """A local copy of a per-case rows artifact (`runs:/<run>/<path>`) under `dst`, or None
        when there is no URI or MLflow no longer has the file."""
        from mlflow.artifacts import download_artifacts

        if not artifact_uri:
            return None
        dst.mkdir(parents=True, exist_ok=True)
        try:
            return download_artifacts(artifact_uri=artifact_uri, dst_path=str(dst),
                                      tracking_uri=self.tracking_uri)
        except (MlflowException, OSError):
            return None

    def _find_runs(self, experiment_id: str, query: str) -> list:
        return list(self.client.search_runs([experiment_id], query,
                                            order_by=["attributes.start_time ASC"]))


def _skipped(path: Path) -> bool:
    return path.is_dir() and any(path.match(pattern) for pattern in SKIPPED_DIRS)


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _key(name: str) -> str:
    """MLflow keys allow letters, digits, `_ - . / space`; anything else becomes `_`."""
    return "".join(c if c.isalnum() or c in "_-./ " else "_" for c in str(name))[:250]


def _now_ms() -> int:
    import time

    return int(time.time() * 1000)
