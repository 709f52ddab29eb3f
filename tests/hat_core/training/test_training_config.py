"""Stage configs: defaults < YAML < overrides, and every invalid value rejected with the
valid keys or options listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hat_core.errors import ConfigError
from hat_core.training import load_stage_config
from hat_core.training.config import (
    REWARD_NAMES,
    RlStageConfig,
    SftStageConfig,
    build_stage_config,
)
from hat_core.training.device import device_defaults, resolve

ROOT = Path(__file__).resolve().parents[3]


def _problems(excinfo) -> str:
    return "\n".join(str(p) for p in excinfo.value.problems)


def test_defaults_yaml_then_overrides(tmp_path):
    path = tmp_path / "sft.yaml"
    path.write_text("max_steps: 7\nlearning_rate: 0.001\nlora: {enabled: true, r: 4}\n"
                    "output_dir: out\n")
    config = load_stage_config("sft", path, {"max_steps": 3, "lora.alpha": "8"},
                               check_paths=False)
    assert isinstance(config, SftStageConfig)
    assert (config.max_steps, config.learning_rate) == (3, 0.001)
    assert (config.lora.enabled, config.lora.r, config.lora.alpha) == (True, 4, 8)
    assert config.max_length == SftStageConfig().max_length


def test_unknown_keys_list_the_valid_keys(tmp_path):
    with pytest.raises(ConfigError) as excinfo:
        build_stage_config("sft", {"output_dir": "o", "max_step": 3, "lora": {"rank": 4}},
                           check_paths=False)
    text = _problems(excinfo)
    assert "max_step: unknown key; valid keys:" in text and "max_steps" in text
    assert "lora.rank: unknown key; valid keys: enabled, r, alpha" in text


def test_invalid_choices_list_the_valid_options():
    data = {"output_dir": "o", "aggregation": "ppo", "device": "tpu", "scale_rewards": "x",
            "rewards": {"accuracy": 1, "speed": 1}, "scenario_kinds": ["price", "weather"]}
    with pytest.raises(ConfigError) as excinfo:
        build_stage_config("rl", data, check_paths=False)
    text = _problems(excinfo)
    assert "aggregation: 'ppo' is not valid; valid options: grpo, gdpo" in text
    assert "device: 'tpu' is not valid; valid options: auto, cpu, cuda" in text
    assert "scale_rewards: 'x' is not valid; valid options: group, batch, none" in text
    assert f"rewards.speed: unknown reward; valid rewards: {', '.join(REWARD_NAMES)}" in text
    assert "scenario_kinds[1]: 'weather' is not valid; valid options: product_fact" in text
    assert "bundle" in text  # a kind a harness adds (v3) is a valid choice too


def test_a_kind_a_harness_adds_is_a_valid_rl_choice():
    config = build_stage_config("rl", {"output_dir": "o", "scenario_kinds": ["bundle"]},
                                check_paths=False)
    assert config.scenario_kinds == ("bundle",)


def test_bad_types_numbers_and_missing_paths_all_at_once(tmp_path):
    data = {"output_dir": "o", "max_steps": "many", "num_generations": 1,
            "base": str(tmp_path / "nope"), "harness": str(tmp_path / "h.yaml")}
    with pytest.raises(ConfigError) as excinfo:
        build_stage_config("rl", data)
    text = _problems(excinfo)
    assert "max_steps: must be int" in text
    assert "num_generations: GRPO needs at least 2" in text
    assert f"base: {tmp_path / 'nope'} does not exist" in text
    assert "h.yaml does not exist" in text


def test_rl_budget_and_rollout_log_settings_are_checked():
    data = {"output_dir": "o", "min_completion_fit": 1.5, "log_rollouts": -1}
    with pytest.raises(ConfigError) as excinfo:
        build_stage_config("rl", data, check_paths=False)
    text = _problems(excinfo)
    assert "min_completion_fit: must be in [0, 1]" in text
    assert "log_rollouts: must be >= 0" in text


def test_unknown_stage_lists_stages():
    with pytest.raises(ConfigError) as excinfo:
        build_stage_config("dpo", {})
    assert "valid stages: sft, opd, rl" in _problems(excinfo)


def test_required_inputs_and_output():
    with pytest.raises(ConfigError) as excinfo:
        build_stage_config("opd", {})
    text = _problems(excinfo)
    assert "output_dir: required" in text and "teacher: required" in text


def test_aggregation_maps_to_trl():
    assert RlStageConfig(aggregation="gdpo").multi_objective_aggregation == "normalize_then_sum"
    assert RlStageConfig(aggregation="grpo").multi_objective_aggregation == "sum_then_normalize"


def test_config_hash_is_stable_and_sensitive():
    a = build_stage_config("sft", {"output_dir": "o"}, check_paths=False)
    b = build_stage_config("sft", {"output_dir": "o"}, check_paths=False)
    c = build_stage_config("sft", {"output_dir": "o", "seed": 1}, check_paths=False)
    assert a.hash() == b.hash() != c.hash()


@pytest.mark.parametrize("name", ["sft_tiny", "sft_gpu", "opd_tiny", "opd_gpu", "rl_tiny",
                                  "rl_gpu"])
def test_example_configs_parse(name):
    stage = name.split("_")[0]
    config = load_stage_config(stage, ROOT / "examples" / "configs" / f"{name}.yaml",
                               check_paths=False)
    assert config.output_dir


def test_cpu_defaults_turn_gpu_features_off():
    from hat_core.cpu import cpu_bf16_native

    defaults = device_defaults("cpu")
    # bf16 (as autocast) only where this CPU computes it in hardware
    assert (defaults.bf16, defaults.gradient_checkpointing, defaults.use_vllm) == (
        cpu_bf16_native(), False, False)
    assert resolve(None, defaults.bf16) is cpu_bf16_native() and resolve(True, False) is True


def test_cuda_without_gpu_is_a_config_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(ConfigError) as excinfo:
        device_defaults("cuda")
    assert "valid options here: auto, cpu" in _problems(excinfo)


def test_rl_steps_hold_whole_groups_and_say_how_many():
    config = build_stage_config("rl", {"output_dir": "o", "num_generations": 4,
                                       "per_device_train_batch_size": 4,
                                       "gradient_accumulation_steps": 3}, check_paths=False)
    assert config.groups_per_step == 3
    assert build_stage_config("rl", {"output_dir": "o"}, check_paths=False).groups_per_step == 2
    with pytest.raises(ConfigError) as excinfo:
        build_stage_config("rl", {"output_dir": "o", "num_generations": 4,
                                  "per_device_train_batch_size": 6}, check_paths=False)
    assert ("per_device_train_batch_size: a step's completions (per_device_train_batch_size x "
            "gradient_accumulation_steps = 6) must be a multiple of num_generations = 4"
            ) in _problems(excinfo)


def test_rl_cot_limits_scale_with_the_teacher_and_are_checked():
    config = load_stage_config("rl", None, {"output_dir": "out", "cot.teacher_tokens": 90},
                               check_paths=False)
    assert (config.cot.limits().free, config.cot.limits().full) == (30, 60)
    default = load_stage_config("rl", None, {"output_dir": "out"}, check_paths=False)
    assert (default.cot.limits().free, default.cot.limits().full) == (100, 200)
    for bad, path in [({"cot.free": 200}, "cot.free"),
                      ({"cot.teacher_tokens": -1}, "cot.teacher_tokens")]:
        with pytest.raises(ConfigError) as err:
            load_stage_config("rl", None, {"output_dir": "out", **bad}, check_paths=False)
        assert [p.path for p in err.value.problems] == [path]


@pytest.mark.parametrize("asked", [None, True, False])
def test_activation_checkpointing_is_what_the_stage_asks_not_trls_default(tmp_path, asked):
    """TRL's configs default `gradient_checkpointing` to True and transformers maps it onto
    `activation_checkpointing`: on CPU that recomputed every forward in the backward pass."""
    import warnings

    from hat_core.training.sft import sft_args

    overrides = {"base": "b", "dataset": "d", "output_dir": str(tmp_path / "out")}
    if asked is not None:
        overrides["gradient_checkpointing"] = asked
    config = load_stage_config("sft", None, overrides, check_paths=False)
    defaults = device_defaults("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # no deprecated-name warning either
        args = sft_args(config, defaults)
    expected = bool(asked) if asked is not None else defaults.gradient_checkpointing
    assert args.activation_checkpointing is expected
    assert args.gradient_checkpointing is expected  # the old name mirrors the new one
