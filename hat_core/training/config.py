"""Typed configs of the three HAT stages: `SftStageConfig`, `OpdStageConfig`, `RlStageConfig`.

Defaults < YAML (`load_stage_config(stage, path)`) < command-line overrides (dotted keys such as
`{"lora.enabled": True, "max_steps": 4}`). The file is read and the dataclass built by
`hat_core.config_file` (the reader every config shares: size, depth and alias limits, no empty
file); everything is validated up front and every problem is reported at once as a
`ConfigError`: an unknown key lists the valid keys, an invalid choice lists the valid options,
an input path that does not exist is named.

    config = load_stage_config("sft", Path("examples/configs/sft_tiny.yaml"),
                               {"base": "models/base"})
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hat_core.config_file import build_config, read_config
from hat_core.errors import ConfigError, Problem
from hat_core.harness.render import PROFILES
from hat_core.sim.rewards import REWARDS

DEVICES = ("auto", "cpu", "cuda")
AGGREGATIONS = {"grpo": "sum_then_normalize", "gdpo": "normalize_then_sum"}
SCALE_REWARDS = ("group", "batch", "none")
REWARD_NAMES = tuple(REWARDS)  # the simulator's reward registry
STAGES = ("sft", "opd", "rl")


@dataclass(frozen=True)
class LoraConfig:
    """LoRA adapters (peft); the adapter is merged into the weights when the stage saves."""

    enabled: bool = False
    r: int = 8
    alpha: int = 16
    dropout: float = 0.05
    target_modules: str = "all-linear"


@dataclass(frozen=True)
class TrackingConfig:
    """MLflow; nothing is logged unless `uri` (or `hat train --tracking-uri`) is set."""

    uri: str | None = None
    experiment: str = "hat-train"
    run_name: str | None = None


@dataclass(frozen=True)
class CotConfig:
    """The CoT length penalty's limits for HSA-RL's rewards (`hat_core.sim.scoring`): 0 up to
    `free` reasoning tokens, 1 from `full`. `teacher_tokens` N > 0 sets them in the report's
    proportion to a teacher that reasons about N tokens (N/3 and 2N/3; the data build's
    `teacher.reasoning_tokens`), overriding `free` and `full`."""

    free: int = 100
    full: int = 200
    teacher_tokens: int = 0

    def limits(self):
        from hat_core.sim.scoring import CotLimits, scaled_cot_limits

        if self.teacher_tokens:
            return scaled_cot_limits(self.teacher_tokens)
        return CotLimits(self.free, self.full)


@dataclass(frozen=True)
class ProbeConfig:
    """The quick regression probe run after the stage: T1 episodes and IFE-P prompts."""

    enabled: bool = True
    harness: str = "examples/harnesses/v1.yaml"
    t1_episodes: int = 4
    ifeval_prompts: int = 4
    ifeval_file: str = "examples/ifeval/hat_ifeval_small.jsonl"
    max_new_tokens: int = 96
    seed: int = 0


@dataclass(frozen=True)
class StageConfig:
    """What every stage shares: model dir in, model dir out, the optimiser loop, the device."""

    base: str = ""
    output_dir: str = ""
    seed: int = 0
    max_steps: int = 10
    learning_rate: float = 1e-4
    per_device_train_batch_size: int = 2
    gradient_accumulation_steps: int = 1
    warmup_steps: int = 0
    logging_steps: int = 1
    save_steps: int = 50
    save_total_limit: int = 2
    device: str = "auto"
    bf16: bool | None = None
    gradient_checkpointing: bool | None = None
    num_threads: int | None = None
    torch_compile: bool = False  # TrainingArguments.torch_compile (worth it for small models)
    render_profile: str | None = None  # hat_core.harness.render.PROFILES; None keeps the active one
    lora: LoraConfig = LoraConfig()
    tracking: TrackingConfig = TrackingConfig()
    probe: ProbeConfig = ProbeConfig()

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def hash(self) -> str:
        """sha256 of the canonical JSON of the config (what makes two runs "the same")."""
        text = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class SftStageConfig(StageConfig):
    """HSA-SFT: `SFTTrainer` on TRL rows `{"messages", "tools"}`, assistant-only loss."""

    dataset: str = ""
    max_length: int = 1024
    assistant_only_loss: bool = True
    learning_rate: float = 2e-4
    # several episodes of one harness surface per row, under one system prompt, every row
    # padded to `max_length` (hat_core.training.packing); off: one episode per row
    pack: bool = False
    max_episodes_per_row: int = 64


@dataclass(frozen=True)
class OpdStageConfig(StageConfig):
    """General OPD: `DistillationTrainer`, teacher = the pre-SFT base, on general prompts."""

    teacher: str = ""
    prompts: str = "builtin"  # builtin | a JSONL file / dataset dir of prompt rows
    prompts_size: int = 64
    beta: float = 1.0  # 0 forward KL, 0.5 JSD, 1 reverse KL
    max_completion_length: int = 64
    temperature: float = 1.0
    learning_rate: float = 5e-5
    use_vllm: bool | None = None


@dataclass(frozen=True)
class RlStageConfig(StageConfig):
    """HSA-RL: `GRPOTrainer` in the simulator under HSA variants of the training pool."""

    harness: str = "examples/harnesses/v1.yaml"
    hsa_config: str | None = None
    variants: int = 4
    include_original: bool = True
    scenarios: int = 32
    catalog_size: int = 24
    single_turn_only: bool = True
    scenario_kinds: tuple[str, ...] = ()  # empty: every kind (see docs/simulator.md)
    rewards: dict[str, float] = field(default_factory=lambda: {
        "accuracy": 1.0, "effectiveness": 1.0, "tool_rationality": 1.0,
        "skill_selection": 1.0, "cot_length_penalty": 1.0})
    aggregation: str = "gdpo"  # grpo | gdpo
    scale_rewards: str = "group"
    num_generations: int = 4
    per_device_train_batch_size: int = 8  # completions per step: 2 groups of 4
    # counts the reasoning, calls, tool results and reply of the rollout's first turn (the
    # oracle's: median ~290, p90 ~550 tokens of toy-long's tokenizer)
    max_completion_length: int = 512
    # the share of the oracle's first turns the cap must hold (checked on 32 rows before
    # training, `rl_env.check_completion_budget`); 0 turns the check off
    min_completion_fit: float = 0.5
    log_rollouts: int = 16  # completions per step written to OUTPUT/rollouts.jsonl (0: none)
    max_tool_calling_iterations: int = 3
    beta: float = 0.0
    temperature: float = 1.0
    learning_rate: float = 1e-5
    use_vllm: bool | None = None
    cot: CotConfig = CotConfig()

    @property
    def multi_objective_aggregation(self) -> str:
        return AGGREGATIONS[self.aggregation]

    @property
    def groups_per_step(self) -> int:
        """Prompts per optimiser step, each with `num_generations` completions: the batch
        (`per_device_train_batch_size` x `gradient_accumulation_steps`, in completions)
        over the group size."""
        completions = self.per_device_train_batch_size * self.gradient_accumulation_steps
        return completions // self.num_generations


CONFIGS: dict[str, type[StageConfig]] = {
    "sft": SftStageConfig, "opd": OpdStageConfig, "rl": RlStageConfig}
CHOICES: dict[str, tuple[str, ...]] = {
    "device": DEVICES, "aggregation": tuple(AGGREGATIONS), "scale_rewards": SCALE_REWARDS,
    "render_profile": PROFILES}
INPUT_PATHS = ("base", "dataset", "teacher", "harness", "hsa_config")


def config_class(stage: str) -> type[StageConfig]:
    """The config class of `stage`; `ConfigError` listing the valid stages otherwise."""
    if stage not in CONFIGS:
        raise ConfigError(f"unknown stage {stage!r}",
                          [Problem("stage", f"valid stages: {', '.join(STAGES)}")])
    return CONFIGS[stage]


def load_stage_config(stage: str, path: Path | None = None,
                      overrides: Mapping[str, Any] | None = None, *,
                      check_paths: bool = True) -> StageConfig:
    """Defaults < the YAML file at `path` < `overrides` (dotted keys; None values skipped)."""
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    data = read_config(path, given, what=f"{stage} stage config")
    return build_stage_config(stage, data, check_paths=check_paths,
                              source=str(path) if path is not None else "")


def build_stage_config(stage: str, data: Mapping[str, Any], *, check_paths: bool = True,
                       source: str = "") -> StageConfig:
    """The typed config of `stage` from a plain mapping; every problem at once. Strings are
    read as numbers, booleans and comma-separated lists (`--set` values)."""
    return build_config(config_class(stage), data, kind=f"{stage} stage", source=source,
                        coerce=True, checks=lambda c: _check_values(c, check_paths))


def _check_values(config: StageConfig, check_paths: bool) -> list[Problem]:
    problems = []
    for key, options in CHOICES.items():
        value = getattr(config, key, None)
        if value is not None and value not in options:
            problems.append(Problem(key, f"{value!r} is not valid; valid options: "
                                         f"{', '.join(options)}"))
    problems += _check_numbers(config)
    if isinstance(config, RlStageConfig):
        problems += _check_rewards(config.rewards)
        problems += _check_kinds(config.scenario_kinds)
    if not config.output_dir:
        problems.append(Problem("output_dir", "required (the model directory this stage writes)"))
    if check_paths:
        problems += _check_paths(config)
    return problems


def _check_numbers(config: StageConfig) -> list[Problem]:
    positive = ["max_steps", "per_device_train_batch_size", "gradient_accumulation_steps",
                "logging_steps", "save_steps", "num_generations", "max_completion_length",
                "max_length", "prompts_size", "scenarios"]
    problems = [Problem(name, f"must be >= 1, got {getattr(config, name)}")
                for name in positive
                if hasattr(config, name) and getattr(config, name) < 1]
    if config.learning_rate <= 0:
        problems.append(Problem("learning_rate", "must be > 0"))
    if isinstance(config, RlStageConfig):
        problems += _check_groups(config)
        problems += _check_cot(config.cot)
        if not 0 <= config.min_completion_fit <= 1:
            problems.append(Problem("min_completion_fit", "must be in [0, 1] (a share of the "
                                                          "oracle's first turns; 0: no check)"))
        if config.log_rollouts < 0:
            problems.append(Problem("log_rollouts", "must be >= 0 (0: no rollout log)"))
    if isinstance(config, OpdStageConfig) and not 0 <= config.beta <= 1:
        problems.append(Problem("beta", "must be in [0, 1] (0 forward KL, 0.5 JSD, 1 reverse KL)"))
    return problems


def _check_groups(config: RlStageConfig) -> list[Problem]:
    """A step's completions must be whole groups of `num_generations` (GRPO compares the
    completions of one prompt with each other)."""
    if config.num_generations < 2:
        return [Problem("num_generations", "GRPO needs at least 2 completions per group")]
    completions = config.per_device_train_batch_size * config.gradient_accumulation_steps
    if completions % config.num_generations:
        return [Problem("per_device_train_batch_size", (
            f"a step's completions (per_device_train_batch_size x gradient_accumulation_steps = "
            f"{completions}) must be a multiple of num_generations = {config.num_generations}: "
            f"{completions // config.num_generations or 1} group(s) per step need "
            f"{(completions // config.num_generations or 1) * config.num_generations}"))]
    return []


def _check_cot(cot: CotConfig) -> list[Problem]:
    if cot.teacher_tokens < 0:
        return [Problem("cot.teacher_tokens", f"must be >= 0, got {cot.teacher_tokens}")]
    if not cot.teacher_tokens and not 0 <= cot.free < cot.full:
        return [Problem("cot.free", f"need 0 <= free < full, got free={cot.free}, "
                                    f"full={cot.full}")]
    return []


def _check_rewards(rewards: Mapping[str, float]) -> list[Problem]:
    problems = [Problem(f"rewards.{name}", f"unknown reward; valid rewards: "
                                           f"{', '.join(REWARD_NAMES)}")
                for name in rewards if name not in REWARD_NAMES]
    if not rewards:
        problems.append(Problem("rewards", f"name at least one of {', '.join(REWARD_NAMES)}"))
    return problems


def _check_kinds(kinds: tuple[str, ...]) -> list[Problem]:
    from hat_core.sim.scenarios import ALL_KINDS

    return [Problem(f"scenario_kinds[{i}]", f"{kind!r} is not valid; valid options: "
                                            f"{', '.join(ALL_KINDS)}")
            for i, kind in enumerate(kinds) if kind not in ALL_KINDS]


def _check_paths(config: StageConfig) -> list[Problem]:
    problems = []
    for name in INPUT_PATHS:
        if not hasattr(config, name):
            continue
        value = getattr(config, name)
        if name in ("base", "dataset", "teacher") and not value:
            problems.append(Problem(name, "required"))
        elif value and not Path(value).exists():
            problems.append(Problem(name, f"{value} does not exist"))
    if isinstance(config, OpdStageConfig) and config.prompts != "builtin" \
            and not Path(config.prompts).exists():
        problems.append(Problem("prompts", f"{config.prompts} does not exist (or use 'builtin')"))
    return problems
