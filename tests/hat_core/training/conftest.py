"""Fixtures for the training tests: the `test`-size base model (built once, cached across
sessions in pytest's cache dir), a tiny SFT set played by the oracle, and stage overrides
that keep every run to a few CPU steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MINI_HARNESS = ROOT / "examples" / "configs" / "rl_mini_harness.yaml"


@pytest.fixture(scope="session", autouse=True)
def _one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def base_model(pytestconfig, tmp_path_factory) -> Path:
    """The `test`-size base model dir (seed 0)."""
    from hat_core.basemodel import build_base_model

    cache = Path(pytestconfig.cache.mkdir("hat-base-models"))
    out = tmp_path_factory.mktemp("training") / "base"
    return build_base_model(out, size="test", seed=0, cache_dir=cache).path


@pytest.fixture(scope="session")
def sft_file(tmp_path_factory) -> Path:
    """16 oracle conversations on the mini harness as a JSONL file of TRL rows."""
    from hat_core.training.rows import oracle_rows

    path = tmp_path_factory.mktemp("data") / "sft.jsonl"
    rows = oracle_rows(MINI_HARNESS, 16, seed=0)
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    return path


FAST_PROBE = {"probe.enabled": False}
SMALL_PROBE = {"probe.enabled": True, "probe.harness": str(MINI_HARNESS), "probe.t1_episodes": 2,
               "probe.ifeval_prompts": 2, "probe.max_new_tokens": 16,
               "probe.ifeval_file": str(ROOT / "examples" / "ifeval" / "hat_ifeval_small.jsonl")}


@pytest.fixture
def sft_overrides(base_model, sft_file, tmp_path) -> dict:
    return {"base": str(base_model), "dataset": str(sft_file),
            "output_dir": str(tmp_path / "sft"), "max_steps": 2, "save_steps": 2,
            "max_length": 768, **FAST_PROBE}


@pytest.fixture
def opd_overrides(base_model, tmp_path) -> dict:
    return {"base": str(base_model), "teacher": str(base_model),
            "output_dir": str(tmp_path / "opd"), "max_steps": 2, "save_steps": 2,
            "prompts_size": 4, "max_completion_length": 16, **FAST_PROBE}


@pytest.fixture
def rl_overrides(base_model, tmp_path) -> dict:
    return {"base": str(base_model), "output_dir": str(tmp_path / "rl"),
            "harness": str(MINI_HARNESS), "max_steps": 2, "save_steps": 2, "variants": 2,
            "scenarios": 30, "scenario_kinds": ["price", "comment"], "num_generations": 2,
            "per_device_train_batch_size": 2, "max_completion_length": 24,
            "min_completion_fit": 0, **FAST_PROBE}
