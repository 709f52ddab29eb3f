"""`hat train sft|opd|rl`: configs validated with exit code 2, real runs, and a real
interruption (a killed process) resumed with `--resume`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hat_cli.main import app

ROOT = Path(__file__).resolve().parents[3]
CONFIGS = ROOT / "examples" / "configs"


def test_bad_config_exits_2_listing_valid_keys_and_options(tmp_path):
    bad = tmp_path / "rl.yaml"
    bad.write_text("aggregation: ppo\nnum_generation: 4\noutput_dir: o\nharness: nope.yaml\n")
    result = CliRunner().invoke(app, ["train", "rl", "--config", str(bad), "--base", "nope"])
    assert result.exit_code == 2
    assert "aggregation: 'ppo' is not valid; valid options: grpo, gdpo" in result.output
    assert "num_generation: unknown key; valid keys:" in result.output
    assert "base: nope does not exist" in result.output
    assert "Traceback" not in result.output


def test_missing_config_file_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["train", "sft", "--config", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2 and "no such sft stage config file" in result.output


def test_bad_set_syntax_exits_2():
    result = CliRunner().invoke(app, ["train", "sft", "--config",
                                      str(CONFIGS / "sft_tiny.yaml"), "--set", "max_steps"])
    assert result.exit_code == 2 and "expected key=value" in result.output


def test_sft_from_the_command_line(base_model, sft_file, tmp_path):
    out = tmp_path / "sft"
    result = CliRunner().invoke(app, [
        "train", "sft", "--config", str(CONFIGS / "sft_tiny.yaml"), "--base", str(base_model),
        "--output-dir", str(out), "--max-steps", "2", "--set", f"dataset={sft_file}",
        "--set", "probe.enabled=false", "--set", "max_length=768", "--set", "num_threads=1",
        "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["steps"] == 2 and data["output_dir"] == str(out)
    assert (out / "model.safetensors").is_file()


def _hat() -> list[str]:
    return [sys.executable, "-c", "from hat_cli.main import app; app()"]


@pytest.mark.slow
def test_a_killed_training_process_resumes_from_its_checkpoint(base_model, sft_file, tmp_path):
    out = tmp_path / "sft"

    def args(max_steps: int) -> list[str]:
        return _hat() + [
            "train", "sft", "--config", str(CONFIGS / "sft_tiny.yaml"), "--base",
            str(base_model), "--output-dir", str(out), "--max-steps", str(max_steps),
            "--set", f"dataset={sft_file}", "--set", "probe.enabled=false",
            "--set", "max_length=768", "--set", "save_steps=20", "--set", "num_threads=1",
            "--set", "save_total_limit=1"]

    proc = subprocess.Popen(args(200), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    states = out / "checkpoints"
    deadline = time.time() + 240
    while time.time() < deadline and not list(states.glob("checkpoint-*/trainer_state.json")):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    saved = sorted(int(p.parent.name.split("-")[1])
                   for p in states.glob("checkpoint-*/trainer_state.json"))
    assert saved, "no checkpoint was written before the kill"
    last = saved[-1]
    result = subprocess.run(args(last + 3) + ["--resume", "--json"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    data = json.loads(result.stdout)
    assert data["resumed_from"].endswith(f"checkpoint-{last}")
    assert data["steps"] == last + 3


def test_options_override_sets_and_unset_options_keep_them():
    from hat_cli.train_cmd import _overrides

    got = _overrides(None, Path("out"), 3, None, ["base=models/x", "lora.enabled=true"])
    assert got == {"base": "models/x", "lora.enabled": "true", "output_dir": "out",
                   "max_steps": 3}
    assert _overrides(Path("b"), None, None, None, ["base=models/x"])["base"] == "b"


NOISE = ("{'loss'", "{'train_runtime'", " INFO ", "| INFO", "| WARNING", "FutureWarning",
         "gradient_checkpointing", "Token indices sequence length")


def test_a_piped_training_run_shows_progress_not_library_chatter(base_model, sft_file, tmp_path):
    """`hat train sft` as a user runs it, piped: the stage's progress and result, no raw log
    dicts or library lines; those go to the log file under HAT_HOME, and nothing is written
    under the (temporary) home folder."""
    home, hat_home = tmp_path / "user", tmp_path / ".hat"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HAT_", "PREFECT_"))}
    env.update(HOME=str(home), HAT_HOME=str(hat_home), PYTHONPATH=str(ROOT))
    env.pop("COLUMNS", None)
    done = subprocess.run(_hat() + [
        "train", "sft", "--config", str(CONFIGS / "sft_tiny.yaml"), "--base", str(base_model),
        "--output-dir", str(tmp_path / "sft"), "--max-steps", "2", "--set", "logging_steps=1",
        "--set", f"dataset={sft_file}", "--set", "probe.enabled=false",
        "--set", "max_length=768", "--set", "num_threads=1",
        "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    shown = done.stdout + done.stderr
    assert done.returncode == 0, shown[-3000:]
    assert [n for n in NOISE if n in shown] == []
    assert "done HSA-SFT (" in shown and "sft: 2 steps -> " in shown
    logs = list((hat_home / "logs").glob("train-sft-*.log"))
    assert len(logs) == 1 and f"library logs: {logs[0]}" in shown
    assert "mlflow" in logs[0].read_text(encoding="utf-8").lower()   # the library's records
    assert f"mlflow ui --backend-store-uri sqlite:///{tmp_path / 'mlflow.db'}" in shown
    assert sorted(p.name for p in home.iterdir()) == []
