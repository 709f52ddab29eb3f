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
from dataclasses import dataclass, replace
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


@dataclass(frozen=True)
class CompletionBudget:
    """How the oracle's first viewer turn (reasoning, calls, tool results and reply, all of
    which a rollout's `max_completion_length` counts) fits the completion cap, in tokens of
    the policy's own tokenizer."""

    cap: int
    lengths: tuple[int, ...]

    @property
    def fits(self) -> float:
        return sum(n <= self.cap for n in self.lengths) / len(self.lengths)

    def summary(self) -> dict:
        ordered = sorted(self.lengths)
        return {"cap": self.cap, "oracle_median": ordered[len(ordered) // 2],
                "oracle_p90": ordered[int(0.9 * (len(ordered) - 1))],
                "oracle_max": ordered[-1], "oracle_fit_share": round(self.fits, 4)}


def completion_budget(pool: Sequence[PoolEntry], catalog: Catalog, rows: Sequence[dict],
                      tokenizer, cap: int, sample: int = 32) -> CompletionBudget:
    """Play the oracle on the first `sample` rows under their variants and measure each first
    viewer turn as the rollout would count it (the chat template's tokens after the prompt)."""
    from hat_core.sim.policy import OraclePolicy
    from hat_core.sim.runner import run_episode
    entries = {e.name: e for e in pool}
    lengths = []
    for row in rows[:sample]:
        entry = entries[row["environment"]]
        scenario = Scenario.from_dict(json.loads(row["scenario"]))
        first = replace(scenario, turns=scenario.turns[:1])  # a rollout plays the first turn
        episode = run_episode(entry.harness, first, catalog,
                              OraclePolicy(), rename_map=entry.rename_map or None)
        messages = [_template_message(m) for m in episode.messages]
        tools = list(entry.binding.rendered.tools) or None
        prompt = _token_count(tokenizer, messages[:2], tools, generation_prompt=True)
        lengths.append(_token_count(tokenizer, messages, tools) - prompt)
    if not lengths:
        raise ConfigError("no RL rows to measure the completion budget on",
                          [Problem("scenarios", "raise it")])
    return CompletionBudget(cap, tuple(lengths))


def check_completion_budget(budget: CompletionBudget, minimum_fit: float = 0.5) -> None:
    """Refuse a cap that cuts most oracle turns: rollouts cut before their call closes score
    no call and no reply, so every group is flat or rewards answering without tools."""
    if budget.fits < minimum_fit:
        s = budget.summary()
        raise ConfigError("max_completion_length cuts most rollouts short", [Problem(
            "max_completion_length",
            f"{budget.cap} tokens holds {s['oracle_fit_share']:.0%} of the oracle's first "
            f"turns (median {s['oracle_median']}, p90 {s['oracle_p90']} tokens with the "
            f"reasoning, calls, tool results and reply); use at least {s['oracle_p90']}")])


def _template_message(message: dict) -> dict:
    out = {k: v for k, v in message.items() if v is not None and k != "tool_call_id"}
    if out.get("tool_calls"):
        out["tool_calls"] = [{"type": "function", "function": {
            "name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}}
            for c in out["tool_calls"]]
    return out


def _token_count(tokenizer, messages: list[dict], tools, generation_prompt: bool = False) -> int:
    ids = tokenizer.apply_chat_template(messages, tools=tools, tokenize=True,
                                        add_generation_prompt=generation_prompt)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return len(ids)


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
