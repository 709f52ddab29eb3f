"""Resume after an interruption continues from the last checkpoint; MLflow tracking records
params, hashes, per-step metrics (each reward too) and the output directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hat_core.training import load_stage_config
from hat_core.training.rl import run_rl
from hat_core.training.sft import run_sft


class Interrupted(Exception):
    pass


def _interrupt_at(step: int, seen: list[int]):
    def progress(event: str, info: dict) -> None:
        if event == "step" and "loss" in info:
            seen.append(info["step"])
            if info["step"] == step:
                raise Interrupted(f"killed at step {step}")

    return progress


def test_sft_resumes_from_its_last_checkpoint(sft_overrides):
    config = load_stage_config("sft", None, sft_overrides | {"max_steps": 4, "save_steps": 2})
    first: list[int] = []
    with pytest.raises(Interrupted):
        run_sft(config, progress=_interrupt_at(3, first))
    checkpoints = config.output_dir + "/checkpoints"
    assert first == [1, 2, 3]
    second: list[int] = []
    result = run_sft(config, resume=True, progress=_interrupt_at(99, second))
    assert result.resumed_from.endswith("checkpoint-2")
    assert second == [3, 4] and result.steps == 4
    state = json.loads(open(f"{checkpoints}/checkpoint-4/trainer_state.json").read())
    assert state["global_step"] == 4


def test_resume_skips_a_checkpoint_cut_off_while_saving(sft_overrides, caplog):
    """A process killed mid-save leaves `checkpoint-N` without `trainer_state.json` (written
    last); resume continues from the newest complete one and saves step N again."""
    import shutil

    config = load_stage_config("sft", None, sft_overrides | {"max_steps": 4, "save_steps": 2})
    with pytest.raises(Interrupted):
        run_sft(config, progress=_interrupt_at(3, []))
    checkpoints = config.output_dir + "/checkpoints"
    shutil.copytree(f"{checkpoints}/checkpoint-2", f"{checkpoints}/checkpoint-10")
    (Path(checkpoints) / "checkpoint-10" / "trainer_state.json").unlink()      # cut off
    shutil.copytree(f"{checkpoints}/checkpoint-2", f"{checkpoints}/checkpoint-8")
    (Path(checkpoints) / "checkpoint-8" / "trainer_state.json").write_text('{"glo')  # half
    second: list[int] = []
    result = run_sft(config, resume=True, progress=_interrupt_at(99, second))
    assert result.resumed_from.endswith("checkpoint-2") and second == [3, 4]
    assert "incomplete checkpoint" in caplog.text and "checkpoint-10" in caplog.text


def test_resume_skips_a_checkpoint_with_damaged_weights(sft_overrides, caplog):
    """A checkpoint whose state reads but whose weights do not (a truncated or corrupted
    `model.safetensors`, or none) is skipped too; the training resumes from the newest
    complete one instead of failing on the load."""
    import os
    import shutil

    config = load_stage_config("sft", None, sft_overrides | {"max_steps": 4, "save_steps": 2})
    with pytest.raises(Interrupted):
        run_sft(config, progress=_interrupt_at(3, []))
    checkpoints = Path(config.output_dir) / "checkpoints"
    shutil.copytree(checkpoints / "checkpoint-2", checkpoints / "checkpoint-10")
    weights = checkpoints / "checkpoint-10" / "model.safetensors"
    os.truncate(weights, weights.stat().st_size // 2)                          # truncated
    shutil.copytree(checkpoints / "checkpoint-2", checkpoints / "checkpoint-8")
    (checkpoints / "checkpoint-8" / "model.safetensors").unlink()               # no weights
    second: list[int] = []
    result = run_sft(config, resume=True, progress=_interrupt_at(99, second))
    assert result.resumed_from.endswith("checkpoint-2") and second == [3, 4]
    assert "checkpoint-10 (unreadable weights model.safetensors" in caplog.text
    assert "checkpoint-8 (no *.safetensors weights)" in caplog.text


def test_resume_without_a_checkpoint_starts_from_zero(sft_overrides):
    config = load_stage_config("sft", None, sft_overrides)
    result = run_sft(config, resume=True)
    assert result.resumed_from is None and result.steps == 2


@pytest.fixture(scope="module")
def mlflow_uri(tmp_path_factory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


def test_rl_stage_is_tracked_in_mlflow(rl_overrides, mlflow_uri):
    from mlflow.tracking import MlflowClient

    config = load_stage_config("rl", None, rl_overrides | {"tracking.uri": mlflow_uri,
                                                           "tracking.experiment": "t"})
    result = run_rl(config)
    client = MlflowClient(tracking_uri=mlflow_uri)
    run = client.get_run(result.run_id)
    assert run.info.status == "FINISHED"
    assert run.data.params["config_hash"] == config.hash()
    assert run.data.params["aggregation"] == "gdpo"
    assert run.data.tags["hat.stage"] == "rl" and "hat.dataset.rl_rows" in run.data.tags
    for name in config.rewards:
        history = client.get_metric_history(result.run_id, f"rewards/{name}/mean")
        assert [m.step for m in history] == [1, 2]
    assert [m.step for m in client.get_metric_history(result.run_id, "flat_groups/share")] \
        == [1, 2]
    assert "global_step" in run.data.metrics
    artifacts = {a.path for a in client.list_artifacts(result.run_id, "model")}
    assert {"model/config.json", "model/hat_stage.json", "model/model.safetensors"} <= artifacts
    assert "model/checkpoints" not in artifacts
    assert "config.json" in {a.path for a in client.list_artifacts(result.run_id)}


def test_no_tracking_uri_means_no_run(sft_overrides):
    result = run_sft(load_stage_config("sft", None, sft_overrides))
    assert result.run_id is None


def test_a_resumed_stage_takes_up_its_interrupted_mlflow_run(sft_overrides, mlflow_uri):
    """One nested run per stage of a job, however often the stage was interrupted."""
    from mlflow.tracking import MlflowClient

    from hat_core.training.tracking import StageTracking

    client = MlflowClient(tracking_uri=mlflow_uri)
    experiment = client.create_experiment("resumed-stage")
    parent = client.create_run(experiment).info.run_id
    config = load_stage_config("sft", None, sft_overrides | {"max_steps": 4, "save_steps": 2})

    def tracking():
        return StageTracking(mlflow_uri, "resumed-stage", "sft", parent_run_id=parent)
    with pytest.raises(Interrupted):
        run_sft(config, tracking=tracking(), progress=_interrupt_at(3, []))
    result = run_sft(config, tracking=tracking(), resume=True)
    children = client.search_runs([experiment], f"tags.mlflow.parentRunId = '{parent}'")
    assert [r.info.run_id for r in children] == [result.run_id]
    assert children[0].info.status == "FINISHED"
