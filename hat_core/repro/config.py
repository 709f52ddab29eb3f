"""The budget of a reproduction-table run (`hat repro`, `benchmarks/repro_table.py`).

    config = load_repro_config(Path("examples/configs/repro_full.yaml"), {"seeds": [0]})

One YAML file names the base size, the seeds, the harness and its edits, and per stage the
overrides applied on top of the project's own stage configs (`examples/configs/*_tiny.yaml`)
and data config (`data_tiny.yaml`). Every arm of one seed gets the same budget; the
Fixed-Harness arm differs from HSA-SFT only by `variants: 0` in its data build. The file is
read and typed by `hat_core.config_file`: an empty or unreadable file is refused, never run
with the defaults.
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

ARMS = ("base", "fixed_sft", "hsa_sft", "hat")
SUITES = ("t1", "t2", "tool_robustness", "prompt_robustness", "cot_length", "ifeval")


@dataclass(frozen=True)
class EvalBudget:
    """Sizes of the evaluation of every arm (the same for all arms and seeds)."""

    episodes: int = 20
    variants: int = 2
    robustness_variants: int = 1
    ifeval_prompts: int = 20
    edit_episodes: int = 10
    max_tokens: int = 160
    seed: int = 0
    suites: tuple[str, ...] = SUITES


@dataclass(frozen=True)
class ReproConfig:
    """Everything a run needs besides the output folders (see the module doc)."""

    base_size: str = "toy"
    base_seed: int | None = 0  # one base for every seed (the "pretrained LLM"); None: per seed
    seeds: tuple[int, ...] = (0, 1, 2)
    harness: str = "examples/harnesses/v1.yaml"
    edits: tuple[str, ...] = ("examples/harnesses/v2.yaml", "examples/harnesses/v3.yaml",
                              "examples/harnesses/v4.yaml")
    render_profile: str = "compact"
    threads: int = 2
    stage_configs: str = "examples/configs"
    data: Mapping[str, Any] = field(default_factory=dict)
    sft: Mapping[str, Any] = field(default_factory=dict)
    opd: Mapping[str, Any] = field(default_factory=dict)
    rl: Mapping[str, Any] = field(default_factory=dict)
    eval: EvalBudget = EvalBudget()

    def to_dict(self) -> dict:
        return json.loads(json.dumps(dataclasses.asdict(self), default=list))


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
    return problems
