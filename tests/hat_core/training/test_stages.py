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
    # every completion of both steps, as the rewards scored it
    rollouts = [json.loads(line) for line in
                (result.output_dir / "rollouts.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rollouts] == [0, 0, 1, 1]
    assert all(set(r["rewards"]) == set(config.rewards) for r in rollouts)
    assert all(r["scenario_id"] and r["user"] and r["environment"] in ("original", "v000", "v001")
               and r["completion"][0]["role"] == "assistant" for r in rollouts)
    assert extra["completion_budget"]["cap"] == 24


def test_rl_with_grpo_aggregation(rl_overrides):
    result = run_rl(load_stage_config("rl", None, rl_overrides | {"aggregation": "grpo"}))
    assert result.steps == 2 and "rewards/accuracy/mean" in result.history[0]


def test_rows_truncated_before_any_assistant_token_are_a_config_error(sft_overrides):
    from hat_core.errors import ConfigError

    with pytest.raises(ConfigError) as excinfo:
        run_sft(load_stage_config("sft", None, sft_overrides | {"max_length": 64}))
    assert "max_length: 64" in str(excinfo.value.problems[0])


def test_rl_refuses_a_completion_cap_that_cuts_most_rollouts(rl_overrides):
    """24 tokens cannot hold a call, its result and a reply; the check names the field and
    the length that would, before any training (no model written)."""
    from pathlib import Path

    from hat_core.errors import ConfigError

    config = load_stage_config("rl", None, rl_overrides | {"min_completion_fit": 0.5})
    with pytest.raises(ConfigError) as excinfo:
        run_rl(config)
    problem = excinfo.value.problems[0]
    assert problem.path == "max_completion_length" and "24 tokens holds" in problem.message
    assert not (Path(config.output_dir) / "hat_stage.json").exists()


def test_completion_budget_measures_the_oracle_turn_in_the_policy_tokens(rl_overrides):
    from hat_core.harness.render import use_profile
    from hat_core.training.rl import rl_data
    from hat_core.training.rl_env import check_completion_budget, completion_budget

    config = load_stage_config("rl", None, rl_overrides)
    tokenizer = AutoTokenizer.from_pretrained(config.base)
    with use_profile(config.render_profile):
        pool, catalog, rows = rl_data(config)
        small = completion_budget(pool, catalog, rows, tokenizer, cap=24, sample=8)
        large = completion_budget(pool, catalog, rows, tokenizer, cap=100_000, sample=8)
    assert small.lengths == large.lengths and len(small.lengths) == min(8, len(rows))
    assert min(small.lengths) > 24  # price and comment turns: a call plus a reply, or a reply
    assert small.fits == 0.0 and large.fits == 1.0
    summary = large.summary()
    assert summary["oracle_median"] <= summary["oracle_p90"] <= summary["oracle_max"]
    check_completion_budget(large)  # holds every turn: no error
    check_completion_budget(small, minimum_fit=0.0)  # the check turned off
