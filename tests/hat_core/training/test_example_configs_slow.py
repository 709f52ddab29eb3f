"""Every example config in examples/configs/ works as shipped, on the sizes it names: the
commands in each file's header run in a scratch folder (its relative paths as written,
`examples/` linked in, `models/base` the `test`-size base that sft_tiny.yaml names), each
training stage for one step (`--max-steps 1`), the CPU data builds on a small scenario bank.
Configs that cannot run here (GPU hosts, a teacher endpoint) or that other tests run are
listed in `ELSEWHERE` with where; a new config in neither list fails the fast check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hat_cli.main import app

ROOT = Path(__file__).resolve().parents[3]
CONFIGS = ROOT / "examples" / "configs"
V1 = "examples/harnesses/v1.yaml"

# (config, the command's arguments after `hat`), run in this order: each uses the one before
RUN_HERE = [
    ("data_tiny.yaml", ["data", "build", "--harness", V1, "--config",
                        "examples/configs/data_tiny.yaml", "--out", "runs/data"]),
    ("sft_tiny.yaml", ["train", "sft", "--config", "examples/configs/sft_tiny.yaml",
                       "--max-steps", "1", "--set", "save_steps=1"]),
    ("opd_tiny.yaml", ["train", "opd", "--config", "examples/configs/opd_tiny.yaml",
                       "--max-steps", "1", "--set", "save_steps=1"]),
    ("rl_tiny.yaml", ["train", "rl", "--config", "examples/configs/rl_tiny.yaml",
                      "--max-steps", "1", "--set", "save_steps=1"]),
    ("data_cpu.yaml", ["data", "build", "--harness", V1, "--config",
                       "examples/configs/data_cpu.yaml", "--out", "runs/data-cpu",
                       "--set", "scenarios=60", "--set", "variants=8"]),
    ("data_cpu_fixed.yaml", ["data", "build", "--harness", V1, "--config",
                             "examples/configs/data_cpu_fixed.yaml", "--out",
                             "runs/data-cpu-fixed", "--set", "scenarios=60"]),
    ("sft_cpu.yaml", ["train", "sft", "--config", "examples/configs/sft_cpu.yaml",
                      "--max-steps", "1", "--set", "save_steps=1", "--set", "warmup_steps=0"]),
    ("opd_cpu.yaml", ["train", "opd", "--config", "examples/configs/opd_cpu.yaml",
                      "--max-steps", "1", "--set", "save_steps=1", "--set", "warmup_steps=0"]),
    ("rl_cpu.yaml", ["train", "rl", "--config", "examples/configs/rl_cpu.yaml",
                     "--max-steps", "1", "--set", "save_steps=1"]),
    ("hsa_pretrain_surface.yaml", ["augment", V1, "-n", "1", "--seed", "777", "--config",
                                   "examples/configs/hsa_pretrain_surface.yaml", "--out",
                                   "runs/s0"]),
]
ELSEWHERE = {
    "retrain_demo.yaml": "tests/cli/test_demo_config.py (and `hat demo`)",
    "retrain_tiny.yaml": "tests/cli/test_demo_config.py (loaded, stages validated)",
    "retrain_demo_toylong.yaml": "tests/cli/test_demo_config.py (loaded, stages validated); "
                                 "`hat demo --config` on it takes about 45 min "
                                 "(docs/operations.md)",
    "retrain_gpu.yaml": "tests/cli/test_demo_config.py (loaded, stages validated); GPU host",
    "repro_quick.yaml": "tests/cli/test_repro_cli_slow.py",
    "repro_full.yaml": "hours on 2 cores (docs/results.md); its stage configs are loaded and "
                       "validated in tests/hat_core/repro/test_repro_eval.py",
    "gates.yaml": "tests/hat_core/release/test_gates.py",
    "rl_mini_harness.yaml": "a harness, run by rl_tiny.yaml here",
    "sft_gpu.yaml": "a GPU host with /models/base (parsed in test_training_config.py)",
    "opd_gpu.yaml": "a GPU host with vLLM (parsed in test_training_config.py)",
    "rl_gpu.yaml": "a GPU host with vLLM (parsed in test_training_config.py)",
    "data_gpu.yaml": "a teacher endpoint (OpenAI-compatible)",
}


def test_every_example_config_is_run_or_says_where():
    shipped = {p.name for p in CONFIGS.glob("*.yaml")}
    ran = {name for name, _ in RUN_HERE}
    assert shipped == ran | set(ELSEWHERE) and not ran & set(ELSEWHERE)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory, base_model) -> Path:
    folder = tmp_path_factory.mktemp("configs")
    (folder / "examples").symlink_to(ROOT / "examples")
    (folder / "models").mkdir()
    (folder / "models" / "base").symlink_to(base_model)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("name,args", RUN_HERE, ids=[name for name, _ in RUN_HERE])
def test_the_config_runs_as_shipped(name, args, scratch, monkeypatch):
    monkeypatch.chdir(scratch)
    result = CliRunner().invoke(app, args, env={"HAT_HOME": str(scratch / ".hat"),
                                                "HAT_MLFLOW_TRACKING_URI": None})
    assert result.exit_code == 0, f"{name}: {result.output[-3000:]}"
    if args[0] == "train":
        out = next(line for line in result.output.splitlines() if " steps -> " in line)
        assert out.startswith(f"{args[1]}: 1 steps -> "), out
        assert (scratch / out.split(" -> ")[1].split(" (")[0] / "hat_stage.json").is_file()
    elif args[0] == "augment":
        assert "wrote 1 variants" in result.output
        assert (scratch / "runs" / "s0" / "variant_000.yaml").is_file()
        return
    else:
        assert "dataset " in result.output and " ready: " in result.output
    assert os.path.isdir(scratch / ".hat" / "logs")
