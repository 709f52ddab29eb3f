"""Each stage trains the `test` base model for real for a few CPU steps and writes a loadable
model directory; RL logs every reward as its own curve and reports flat groups."""

from __future__ import annotations

import json

import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

from hat_core.training import load_stage_config, read_manifest
from hat_core.training.opd import run_opd
from hat_core.training.rl import run_rl
from hat_core.training.sft import run_sft
from tests.hat_core.training.conftest import SMALL_PROBE


def _loadable(path):
    model = AutoModelForCausalLM.from_pretrained(str(path))
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    assert tokenizer.chat_template and model.config.model_type == "qwen3"
    return model


def test_sft_trains_and_writes_a_loadable_model(sft_overrides, base_model):
    events = []
    config = load_stage_config("sft", None, sft_overrides | SMALL_PROBE)
    result = run_sft(config, progress=lambda e, info: events.append(e))
    assert result.steps == 2 and result.metrics["train_loss"] > 0
    _loadable(result.output_dir)
    manifest = read_manifest(result.output_dir)
    assert manifest["stage"] == "sft" and manifest["config_hash"] == config.hash()
    assert len(manifest["dataset_hashes"]["sft"]) == 64
    assert {"t1_pass_rate", "ifeval_prompt_strict", "t1_accuracy"} <= set(result.probe)
    assert result.probe["t1_episodes"] == 2 and result.probe["ifeval_prompts"] == 2
    assert events.count("step") >= 2 and "probe" in events
    assert (result.output_dir / "checkpoints" / "checkpoint-2").is_dir()


def test_sft_with_lora_saves_merged_weights(sft_overrides, base_model):
    config = load_stage_config("sft", None, sft_overrides | {"lora.enabled": True,
                                                             "lora.r": 4})
    result = run_sft(config)
    files = {p.name for p in result.output_dir.iterdir()}
    assert "adapter_config.json" not in files and "model.safetensors" in files
    model = _loadable(result.output_dir)
    base = AutoModelForCausalLM.from_pretrained(str(base_model))
    assert model.state_dict().keys() == base.state_dict().keys()


def test_opd_distils_from_the_base_teacher(opd_overrides):
    result = run_opd(load_stage_config("opd", None, opd_overrides))
    assert result.steps == 2
    _loadable(result.output_dir)
    assert read_manifest(result.output_dir)["dataset_hashes"]["opd_prompts"]


def test_rl_logs_each_reward_and_counts_flat_groups(rl_overrides):
    config = load_stage_config("rl", None, rl_overrides)
    result = run_rl(config)
    assert result.steps == 2
    _loadable(result.output_dir)
    logged = [h for h in result.history if "reward" in h]
    assert len(logged) == 2
    for name in config.rewards:
        assert all(f"rewards/{name}/mean" in h for h in logged)
    assert all(-1.0 <= h["rewards/cot_length_penalty/mean"] <= 0.0 for h in logged)
    assert all("flat_groups/share" in h for h in logged)
    extra = result.extra
    assert extra["groups"] >= 2 and 0 <= extra["flat_groups"] <= extra["groups"]
    assert [p["name"] for p in extra["pool"]] == ["original", "v000", "v001"]
    assert extra["cot_limits"] == {"free": 100, "full": 200}
    manifest = read_manifest(result.output_dir)
    assert manifest["extra"]["flat_group_share"] == extra["flat_group_share"]
    assert set(manifest["dataset_hashes"]) == {"harness", "rl_rows"}
    json.dumps(result.to_dict(), default=str)


def test_rl_with_grpo_aggregation(rl_overrides):
    result = run_rl(load_stage_config("rl", None, rl_overrides | {"aggregation": "grpo"}))
    assert result.steps == 2 and "rewards/accuracy/mean" in result.history[0]


def test_rows_truncated_before_any_assistant_token_are_a_config_error(sft_overrides):
    from hat_core.errors import ConfigError

    with pytest.raises(ConfigError) as excinfo:
        run_sft(load_stage_config("sft", None, sft_overrides | {"max_length": 64}))
    assert "max_length: 64" in str(excinfo.value.problems[0])
