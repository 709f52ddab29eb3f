"""HSA-RL: GRPO or GDPO in the live-stream simulator under HSA variants of the training pool.

    result = run_rl(load_stage_config("rl", Path("examples/configs/rl_tiny.yaml")))
    result.extra  # {"flat_groups": 3, "groups": 16, "flat_group_share": 0.1875, "pool": [...]}

`GRPOTrainer` with the simulator as `environment_factory` (one environment per variant, see
`rl_env.py`), one reward function per weighted reward (`rewards_adapter.py`, logged as
`rewards/<name>/mean`), `multi_objective_aggregation` = `sum_then_normalize` (GRPO) or
`normalize_then_sum` (GDPO), and the CoT length penalty as the negative `cot_length_penalty`
reward, scored with the stage's `cot` limits (`use_cot_limits`; 100 / 200 by default, or in
proportion to a long-reasoning teacher's length). Groups whose rewards carry no signal are
counted and reported.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from hat_core.training.config import RlStageConfig
from hat_core.training.device import resolve
from hat_core.training.rewards_adapter import FlatGroups, RolloutLog, reward_functions
from hat_core.training.rl_env import (
    check_completion_budget,
    completion_budget,
    environment_factories,
    rl_rows,
    select_scenarios,
    use_harness_tool_schemas,
    variant_pool,
)
from hat_core.training.rows import file_digest, rows_digest
from hat_core.training.stage import (
    Progress,
    StageResult,
    load_model,
    peft_config,
    profiled,
    run_stage,
    setup,
    tracking_for,
    training_kwargs,
)


def rl_args(config: RlStageConfig, defaults):
    """The `GRPOConfig` of a stage config."""
    from trl import GRPOConfig

    return GRPOConfig(
        **training_kwargs(config, defaults), num_generations=config.num_generations,
        max_completion_length=config.max_completion_length,
        max_tool_calling_iterations=config.max_tool_calling_iterations,
        reward_weights=list(config.rewards.values()),
        multi_objective_aggregation=config.multi_objective_aggregation,
        scale_rewards=config.scale_rewards, beta=config.beta, temperature=config.temperature,
        use_vllm=resolve(config.use_vllm, defaults.use_vllm))


def rl_data(config: RlStageConfig):
    """`(pool, catalog, rows)`: the variant pool, the seeded catalog and the prompt rows."""
    from hat_core.harness.io import load_harness
    from hat_core.sim.batch import world
    from hat_core.sim.scenarios import extra_counts, kinds_for

    harness = load_harness(Path(config.harness))
    pool = variant_pool(harness, config.variants, config.seed,
                        include_original=config.include_original,
                        hsa_config_path=config.hsa_config)
    # the kinds the harness adds (v3: bundle) after the bank, one stratum each; none for v1/v2
    catalog, scenarios = world(config.seed, config.scenarios, size=config.catalog_size,
                               extra=extra_counts(kinds_for(harness), config.scenarios))
    chosen = select_scenarios(scenarios, config.scenario_kinds, config.single_turn_only)
    return pool, catalog, rl_rows(pool, chosen, random.Random(config.seed))


def build_rl_trainer(config: RlStageConfig, defaults):
    """`(trainer, tokenizer, flat group counter, data info)` ready to train."""
    from datasets import Dataset
    from trl import GRPOTrainer

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    pool, catalog, rows = rl_data(config)
    model, tokenizer = load_model(config.base, defaults, config)
    budget = completion_budget(pool, catalog, rows, tokenizer, config.max_completion_length)
    check_completion_budget(budget, config.min_completion_fit)
    flat = FlatGroups(config.num_generations, config.rewards, config.aggregation)
    rollouts = RolloutLog(Path(config.output_dir) / "rollouts.jsonl", config.log_rollouts)
    trainer = GRPOTrainer(
        model=model, reward_funcs=reward_functions(config.rewards, flat, rollouts),
        args=rl_args(config, defaults), train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer, peft_config=peft_config(config),
        environment_factory=environment_factories(pool, catalog))
    use_harness_tool_schemas(trainer, pool)
    info = {"pool": [{"name": e.name, "harness_hash": e.binding.harness_hash} for e in pool],
            "rows": len(rows), "rows_hash": rows_digest(rows),
            "completion_budget": budget.summary()}
    return trainer, tokenizer, flat, info


@profiled
def run_rl(config: RlStageConfig, *, tracking=None, progress: Progress | None = None,
           resume: bool = False) -> StageResult:
    """Run HSA-RL: `config.base` -> `config.output_dir`."""
    from hat_core.sim.scoring import use_cot_limits

    defaults = setup(config)
    trainer, tokenizer, flat, info = build_rl_trainer(config, defaults)
    if not resume:
        (Path(config.output_dir) / "rollouts.jsonl").unlink(missing_ok=True)
    hashes = {"harness": file_digest(config.harness), "rl_rows": info["rows_hash"]}
    limits = config.cot.limits()
    with use_cot_limits(limits):  # the rewards score the penalty with the stage's limits
        return run_stage("rl", trainer, tokenizer, config, resume=resume,
                         tracking=tracking_for(config, "rl", tracking), dataset_hashes=hashes,
                         progress=progress,
                         extra=lambda: flat.summary() | {
                             "pool": info["pool"], "rows": info["rows"],
                             "completion_budget": info["completion_budget"],
                             "cot_limits": {"free": limits.free, "full": limits.full}})

