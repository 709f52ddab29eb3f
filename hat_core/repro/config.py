"""The budget of a reproduction-table run (`hat repro`, `benchmarks/repro_table.py`).

    config = load_repro_config(Path("examples/configs/repro_full.yaml"), {"seeds": [0]})

One YAML file names the base size, the seeds, the harness and its edits, and per stage the
overrides applied on top of the project's own stage configs (`examples/configs/*_tiny.yaml`)
and data config (`data_tiny.yaml`). Every arm of one seed gets the same budget; the
Fixed-Harness arm differs from HSA-SFT only by `variants: 0` in its data build.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hat_core.errors import ConfigError, Problem
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
    """Defaults < the YAML file < `overrides` (top-level keys; `eval` merges key by key)."""
    data: dict = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"{p}: no such repro config file")
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    for key, value in (overrides or {}).items():
        if key == "eval" and isinstance(value, Mapping):
            data["eval"] = {**data.get("eval", {}), **value}
        else:
            data[key] = value
    return _from_data(data, str(path or "<config>"))


def _from_data(data: Mapping[str, Any], source: str) -> ReproConfig:
    names = {f.name for f in dataclasses.fields(ReproConfig)}
    eval_names = {f.name for f in dataclasses.fields(EvalBudget)}
    problems = [Problem(k, f"unknown key; valid keys: {', '.join(sorted(names))}")
                for k in data if k not in names]
    budget = data.get("eval") or {}
    problems += [Problem(f"eval.{k}", f"unknown key; valid keys: {', '.join(sorted(eval_names))}")
                 for k in budget if k not in eval_names]
    if data.get("render_profile", "compact") not in PROFILES:
        problems.append(Problem("render_profile", f"valid profiles: {', '.join(PROFILES)}"))
    bad_suites = [s for s in budget.get("suites", ()) if s not in SUITES]
    if bad_suites:
        problems.append(Problem("eval.suites", f"{bad_suites}; valid: {', '.join(SUITES)}"))
    if problems:
        raise ConfigError(f"{source}: invalid repro config ({len(problems)} problems)", problems)
    values = {k: v for k, v in data.items() if k != "eval"}
    for key in ("seeds", "edits"):
        if key in values:
            values[key] = tuple(values[key])
    eval_values = {k: tuple(v) if k == "suites" else v for k, v in budget.items()}
    return ReproConfig(**values, eval=EvalBudget(**eval_values))
