"""The three HAT stages on TRL: HSA-SFT, General OPD and HSA-RL (GRPO or GDPO).

    from hat_core.training import load_stage_config, run_stage_named
    config = load_stage_config("sft", Path("examples/configs/sft_tiny.yaml"),
                               {"base": "models/base"})
    result = run_stage_named("sft", config)  # StageResult(output_dir, steps, metrics, probe)

Each stage reads a model directory and writes one (`hat train sft|opd|rl --config FILE`).
Modules: `config` (typed stage configs, YAML, validation), `device` (CPU/GPU defaults),
`rows` (SFT rows, OPD prompts, hashes), `stage` (shared loop: load, train, resume, save,
manifest), `sft`, `opd`, `rl` (one TRL trainer each), `rl_env` (the simulator as a per-variant
environment), `rewards_adapter` (the simulator's rewards as GRPO reward functions, flat
groups), `probe` (the regression probe after a stage), `tracking` (MLflow). See docs/training.md.
"""

from hat_core.training.config import (
    OpdStageConfig,
    RlStageConfig,
    SftStageConfig,
    StageConfig,
    load_stage_config,
)
from hat_core.training.stage import StageResult, last_checkpoint, read_manifest

STAGES = ("sft", "opd", "rl")


def run_stage_named(stage: str, config: StageConfig, **kwargs) -> StageResult:
    """Run `stage` ("sft", "opd" or "rl") with `config`; kwargs: tracking, progress, resume."""
    from hat_core.training.opd import run_opd
    from hat_core.training.rl import run_rl
    from hat_core.training.sft import run_sft

    runners = {"sft": run_sft, "opd": run_opd, "rl": run_rl}
    return runners[stage](config, **kwargs)


__all__ = [
    "STAGES", "OpdStageConfig", "RlStageConfig", "SftStageConfig", "StageConfig", "StageResult",
    "last_checkpoint", "load_stage_config", "read_manifest", "run_stage_named",
]
