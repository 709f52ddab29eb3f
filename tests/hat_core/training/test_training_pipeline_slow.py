"""The three stages chained the way the retrain flow runs them, long enough for SFT to learn:
base -> SFT -> OPD (teacher = the base) -> RL (GDPO), each probed, each output the next input."""

from __future__ import annotations

import pytest

from hat_core.training import load_stage_config, read_manifest, run_stage_named
from tests.hat_core.training.conftest import SMALL_PROBE


@pytest.mark.slow
def test_base_sft_opd_rl_chain(base_model, sft_file, tmp_path):
    sft = run_stage_named("sft", load_stage_config("sft", None, {
        "base": str(base_model), "dataset": str(sft_file), "output_dir": str(tmp_path / "sft"),
        "max_steps": 30, "save_steps": 30, "learning_rate": 3e-3, "max_length": 768,
        **SMALL_PROBE}))
    losses = [h["loss"] for h in sft.history if "loss" in h]
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5 - 0.5, losses
    opd = run_stage_named("opd", load_stage_config("opd", None, {
        "base": str(sft.output_dir), "teacher": str(base_model),
        "output_dir": str(tmp_path / "opd"), "max_steps": 6, "save_steps": 6,
        "prompts_size": 12, "max_completion_length": 24, **SMALL_PROBE}))
    rl = run_stage_named("rl", load_stage_config("rl", None, {
        "base": str(opd.output_dir), "output_dir": str(tmp_path / "rl"),
        "harness": SMALL_PROBE["probe.harness"], "max_steps": 4, "save_steps": 4,
        "variants": 2, "scenarios": 45, "scenario_kinds": ["price", "comment"],
        "num_generations": 4, "per_device_train_batch_size": 4,
        "max_completion_length": 32, "min_completion_fit": 0, **SMALL_PROBE}))
    for result in (sft, opd, rl):
        manifest = read_manifest(result.output_dir)
        assert manifest["probe"]["t1_episodes"] == 2 and manifest["steps"] == result.steps
    assert rl.extra["groups"] == 4


@pytest.mark.slow
def test_rl_tool_calls_execute_in_the_simulator(base_model, tmp_path):
    """A model that has memorised the price question calls `get_price` in its GRPO rollouts;
    TRL runs the call on the environment, and the rewards see a successful call."""
    import json

    from hat_core.harness.io import load_harness
    from hat_core.sim.batch import world
    from hat_core.sim.binding import bind
    from hat_core.sim.policy import OraclePolicy
    from hat_core.sim.runner import run_episode
    from hat_core.training.rows import sft_row

    harness = load_harness(SMALL_PROBE["probe.harness"])
    catalog, scenarios = world(0, 30)
    price = [s for s in scenarios if s.kind == "price"]
    tools = bind(harness).rendered.tools
    rows = [sft_row(list(run_episode(harness, s, catalog, OraclePolicy()).messages), tools)
            for s in price] * 16
    data = tmp_path / "price.jsonl"
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows))
    sft = run_stage_named("sft", load_stage_config("sft", None, {
        "base": str(base_model), "dataset": str(data), "output_dir": str(tmp_path / "sft"),
        "max_steps": 120, "save_steps": 1000, "learning_rate": 5e-3,
        "per_device_train_batch_size": 4, "max_length": 768, "probe.enabled": False}))
    rl = run_stage_named("rl", load_stage_config("rl", None, {
        "base": str(sft.output_dir), "output_dir": str(tmp_path / "rl"),
        "harness": SMALL_PROBE["probe.harness"], "max_steps": 2, "save_steps": 100,
        "variants": 0, "scenarios": 30, "scenario_kinds": ["price"], "num_generations": 2,
        "per_device_train_batch_size": 2, "max_completion_length": 160, "temperature": 0.7,
        "min_completion_fit": 0,  # the call must close; the reply after it may be cut
        "probe.enabled": False}))
    logged = [h for h in rl.history if "tools/call_frequency" in h]
    assert logged and all(h["tools/call_frequency"] > 0 for h in logged)
    assert all(h["tools/failure_frequency"] == 0 for h in logged)
    assert all(h["rewards/skill_selection/mean"] == 1.0 for h in logged)
    assert all(h["rewards/accuracy/mean"] >= 0.5 for h in logged)
