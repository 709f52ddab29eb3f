"""The simulator as a TRL `environment_factory`, one environment per harness variant.

GRPO renders each prompt with the tools of the environment its row names, and executes the
model's tool calls on that environment's methods. HSA renames tools per variant, so each
variant gets its own generated class whose public methods are the variant's tool names:

    pool = variant_pool(harness, n=4, seed=0)                # original + 4 train-pool variants
    factories = environment_factories(pool, catalog)         # {"v000": class, ...}
    rows = rl_rows(pool, scenarios, rng)                     # each row draws its variant
    GRPOTrainer(..., environment_factory=factories, train_dataset=Dataset.from_list(rows))
    use_harness_tool_schemas(trainer, pool)                  # prompts show the harness's schemas

A tool call executes against the seeded catalog through the variant's binding (argument
schema check, canonical parameters), exactly as in `hat_core.sim.runner`; the result is the
simulator's JSON tool message. Rows carry `scenario`, `harness` (the variant, JSON) and
`rename_map`, the columns the reward functions read (see `rewards_adapter.py`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hat_core.errors import ConfigError, Problem
from hat_core.harness.model import Harness
from hat_core.harness.render import render_tools
from hat_core.sim.binding import Binding, bind, canonical_params
from hat_core.sim.catalog import Catalog
from hat_core.sim.scenarios import Scenario
from hat_core.sim.tools import ToolResult, execute, failure

RESERVED = ("reset", "get_reward")


@dataclass(frozen=True)
class PoolEntry:
    """One harness surface rollouts may be played under."""

    name: str
    harness: Harness
    rename_map: dict

    @property
    def binding(self) -> Binding:
        return bind(self.harness, self.rename_map or None)


def variant_pool(harness: Harness, n: int, seed: int, *, include_original: bool = True,
                 hsa_config_path: str | None = None) -> list[PoolEntry]:
    """The original harness (optional) plus `n` HSA variants from the training pool."""
    from hat_core.hsa import HsaConfig, augment_many, load_config

    config = load_config(Path(hsa_config_path)) if hsa_config_path else HsaConfig()
    if config.pool != "train":
        raise ConfigError("RL trains on the training variant pool only", [
            Problem("hsa_config.pool", f"{config.pool!r}; the held-out pool is for evaluation")])
    pool = [PoolEntry("original", harness, {})] if include_original else []
    canonical = canonical_params(harness)
    for i, variant in enumerate(augment_many(harness, n, seed, config)):
        pool.append(PoolEntry(f"v{i:03d}", variant.harness,
                              variant.rename_map.binding_map(canonical)))
    if not pool:
        raise ConfigError("empty variant pool", [Problem("variants", "use >= 1 or "
                                                                     "include_original: true")])
    return pool


class SimEnvironment:
    """One rollout's environment; subclasses add one method per tool of their variant."""

    binding: Binding
    catalog: Catalog

    def reset(self, **row) -> None:
        self.calls: list[tuple[str, dict, ToolResult]] = []

    def _call(self, name: str, arguments: dict) -> str:
        result = run_tool(self.binding, self.catalog, name, arguments)
        self.calls.append((name, arguments, result))
        return json.dumps(result.message(), ensure_ascii=False)


def run_tool(binding: Binding, catalog: Catalog, name: str, arguments: dict) -> ToolResult:
    """Execute one call of the harness tool `name` (a typed failure when it cannot run)."""
    tb = binding.tools_by_name.get(name)
    if tb is None:
        return failure("unknown_tool", f"没有名为 {name} 的工具")
    if not isinstance(arguments, dict) or not tb.validator.is_valid(arguments):
        return failure("bad_arguments", "参数不符合工具定义")
    if not tb.implemented:
        return failure("not_implemented", f"工具 {name} 暂不可用")
    return execute(catalog, tb.tool_id, tb.canonical_args(arguments))


def _tool_method(name: str, description: str):
    def method(self, **arguments) -> str:
        return self._call(name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = description
    return method


def environment_class(entry: PoolEntry, catalog: Catalog) -> type[SimEnvironment]:
    """A `SimEnvironment` subclass whose public methods are `entry`'s tool names."""
    binding = entry.binding
    methods = {}
    for tool in render_tools(binding.harness):  # schemas, whatever the render profile
        name = tool["function"]["name"]
        if name in RESERVED or name.startswith("_"):
            raise ConfigError(f"tool name {name!r} cannot be an environment method",
                              [Problem(f"{entry.name}.tools", f"avoid {', '.join(RESERVED)} "
                                                              "and a leading underscore")])
        methods[name] = _tool_method(name, tool["function"].get("description", ""))
    attrs = {"binding": binding, "catalog": catalog, **methods}
    return type(f"SimEnvironment_{entry.name}", (SimEnvironment,), attrs)


def environment_factories(pool: Sequence[PoolEntry], catalog: Catalog) -> dict[str, type]:
    """`{variant name: environment class}` for `GRPOTrainer(environment_factory=...)`."""
    return {entry.name: environment_class(entry, catalog) for entry in pool}


def use_harness_tool_schemas(trainer, pool: Sequence[PoolEntry]) -> None:
    """Show each variant's tools exactly as the harness renders them (as SFT and evaluation
    do) instead of TRL's schemas inferred from the methods' signatures; none under the
    `compact` render profile, whose system prompt lists the tools."""
    if not hasattr(trainer, "_env_tools"):
        raise RuntimeError("this TRL version has no per-environment tool list (_env_tools); "
                           "pin trl==1.16")
    for entry in pool:
        trainer._env_tools[entry.name] = list(entry.binding.rendered.tools)


def prompt_messages(entry: PoolEntry, scenario: Scenario) -> list[dict]:
    """The system prompt of the variant and the scenario's first viewer message."""
    return [{"role": "system", "content": entry.binding.rendered.system_prompt},
            {"role": "user", "content": scenario.turns[0].user}]


def rl_rows(pool: Sequence[PoolEntry], scenarios: Sequence[Scenario],
            rng: random.Random) -> list[dict]:
    """One row per scenario; each row's harness is drawn from `pool`."""
    harness_json = {e.name: json.dumps(e.harness.model_dump(mode="json"), ensure_ascii=False)
                    for e in pool}
    rows = []
    for scenario in scenarios:
        entry = rng.choice(list(pool))
        rows.append({"prompt": prompt_messages(entry, scenario), "environment": entry.name,
                     "scenario": json.dumps(scenario.to_dict(), ensure_ascii=False),
                     "harness": harness_json[entry.name],
                     "rename_map": json.dumps(entry.rename_map, ensure_ascii=False)})
    return rows


def select_scenarios(scenarios: Sequence[Scenario], kinds: Sequence[str],
                     single_turn_only: bool) -> list[Scenario]:
    """Scenarios of the given kinds (all when empty), single-turn ones only if asked (a
    rollout covers the first viewer turn, so later turns would score 0)."""
    out = [s for s in scenarios if (not kinds or s.kind in kinds)
           and (len(s.turns) == 1 or not single_turn_only)]
    if not out:
        raise ConfigError("no scenario left to train on",
                          [Problem("scenario_kinds", "widen the kinds or raise `scenarios`")])
    return out
