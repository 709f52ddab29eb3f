"""The budget of a reproduction-table run (`hat repro`, `benchmarks/repro_table.py`).

    config = load_repro_config(Path("examples/configs/repro_full.yaml"), {"seeds": [0]})

One YAML file names the base (a size to build, or a model directory such as the shipped
`examples/models/toy-long`), the seeds, the harness and its edits, the stage config files
(`stage_files`, under `stage_configs`: the `*_tiny.yaml` by default, the CPU recipe's
`*_cpu.yaml` in `repro_full.yaml`) and per stage the overrides applied on top of them. Every
arm of one seed gets the same budget; the Fixed-Harness arm differs from HSA-SFT only by its
data build (`stage_files.data_fixed`, else the HSA data file with `variants: 0`).

A seed fixes the data, the training and the evaluation world: seed N is evaluated on eval
world N (`eval_seed_of`) unless `eval.seed` pins one world for every seed. The file is read
and typed by `hat_core.config_file`: an empty or unreadable file is refused, never run with
the defaults.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hat_core.config_file import build_config, read_config
from hat_core.errors import Problem
from hat_core.harness.render import PROFILES

# hsa_opd: the HSA-SFT + OPD checkpoint HAT's RL starts from (no training of its own)
ARMS = ("base", "fixed_sft", "hsa_sft", "hsa_opd", "hat")
ARM_LABELS = {"base": "Base (no training)", "fixed_sft": "Fixed-Harness SFT",
              "hsa_sft": "HSA-SFT only", "hsa_opd": "HSA-SFT + OPD",
              "hat": "HAT (HSA-SFT → OPD → HSA-RL)"}
# t2_edit: T1's scenarios under the first of `edits` (the operator's own edit, v2)
SUITES = ("t1", "t2", "t2_edit", "tool_robustness", "prompt_robustness", "cot_length",
          "ifeval")


@dataclass(frozen=True)
class EvalBudget:
    """Sizes of the evaluation of every arm (the same for all arms and seeds)."""

    episodes: int = 20
    variants: int = 2
    robustness_variants: int = 1
    ifeval_prompts: int | None = None  # None: every prompt of the project's IFEval set
    edit_episodes: int = 10
    max_tokens: int = 160
    seed: int | None = None  # None: each seed plays its own eval world (`eval_seed_of`)
    suites: tuple[str, ...] = SUITES


@dataclass(frozen=True)
class StageFiles:
    """The project's stage config files (under `ReproConfig.stage_configs`) each stage starts
    from before the repro config's overrides. `data_fixed`: the Fixed-Harness arm's data
    file; None: `data` with `variants: 0`."""

    data: str = "data_tiny.yaml"
    data_fixed: str | None = None
    sft: str = "sft_tiny.yaml"
    opd: str = "opd_tiny.yaml"
    rl: str = "rl_tiny.yaml"


@dataclass(frozen=True)
class ReproConfig:
    """Everything a run needs besides the output folders (see the module doc)."""

    base_size: str = "toy"
    base_model: str | None = None  # a model directory used as the base (nothing built)
    base_seed: int | None = 0  # one base for every seed (the "pretrained LLM"); None: per seed
    seeds: tuple[int, ...] = (0, 1, 2)
    harness: str = "examples/harnesses/v1.yaml"
    edits: tuple[str, ...] = ("examples/harnesses/v2.yaml", "examples/harnesses/v3.yaml",
                              "examples/harnesses/v4.yaml")
    render_profile: str = "compact"
    threads: int = 2
    stage_configs: str = "examples/configs"
    stage_files: StageFiles = StageFiles()
    data: Mapping[str, Any] = field(default_factory=dict)
    sft: Mapping[str, Any] = field(default_factory=dict)
    opd: Mapping[str, Any] = field(default_factory=dict)
    rl: Mapping[str, Any] = field(default_factory=dict)
    eval: EvalBudget = EvalBudget()

    def to_dict(self) -> dict:
        return json.loads(json.dumps(dataclasses.asdict(self), default=list))

    def eval_seed_of(self, seed: int) -> int:
        """The eval world seed `seed` plays: its own, unless `eval.seed` pins one."""
        return seed if self.eval.seed is None else self.eval.seed


def load_repro_config(path: str | Path | None = None,
                      overrides: Mapping[str, Any] | None = None) -> ReproConfig:
    """Defaults < the YAML file < `overrides` (dotted keys, `{"eval.episodes": 4}`)."""
    data = read_config(path, overrides, what="repro config")
    return build_config(ReproConfig, data, kind="repro", source=str(path or "<config>"),
                        checks=_check_values)


def _check_values(config: ReproConfig) -> list[Problem]:
    problems = []
    if config.render_profile not in PROFILES:
        problems.append(Problem("render_profile", f"valid profiles: {', '.join(PROFILES)}"))
    bad_suites = [s for s in config.eval.suites if s not in SUITES]
    if bad_suites:
        problems.append(Problem("eval.suites", f"{bad_suites}; valid: {', '.join(SUITES)}"))
    if "t2_edit" in config.eval.suites and not config.edits:
        problems.append(Problem("eval.suites", "t2_edit plays the first of `edits`; "
                                "name an edit or leave t2_edit out"))
    if config.eval.ifeval_prompts is not None and config.eval.ifeval_prompts < 1:
        problems.append(Problem("eval.ifeval_prompts", "at least 1, or leave it out for all"))
    return problems
