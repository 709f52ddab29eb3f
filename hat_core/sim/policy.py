"""Policies: what plays the assistant in an episode.

The interface is `Policy.act(obs) -> AssistantTurn`: `obs.messages` (the OpenAI-style
conversation so far, read-only) and `obs.tools` (the harness's tool list) are what a model
sees. Scripted teachers may also read `obs.harness`, `obs.scenario` and `obs.turn`.

- `OraclePolicy`: solves every scenario under any harness. It reads the ground truth of the
  scenario, finds the tools by id in the harness it is given and calls them by their surface
  names and parameter names (through `hat_core.sim.binding`), then writes a Chinese reply from
  the tool results, with a short `reasoning` and the skill's surface name.
- `MemorisingPolicy`: the oracle of one fixed harness (say v1), whatever harness it is shown:
  the failure mode HAT fixes.
- `RandomPolicy`: random tools with random arguments, or a random reply (seeded).
- `ScriptedPolicy`: plays a fixed list of turns (tests).
"""

from __future__ import annotations

import json
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hat_core.harness.model import Harness
from hat_core.harness.render import listed_line
from hat_core.sim import replies
from hat_core.sim.binding import Binding, ToolBinding, bind
from hat_core.sim.episode import AssistantTurn, ToolCall
from hat_core.sim.reasoning import deliberate
from hat_core.sim.scenarios import ExpectedCall, Scenario


@dataclass(frozen=True)
class Observation:
    """What a policy is given at each step."""

    messages: Sequence[dict]
    tools: Sequence[dict]
    harness: Harness
    scenario: Scenario
    turn: int
    rename_map: Mapping[str, Mapping[str, str]] | None = None


class Policy(ABC):
    """Plays the assistant: one assistant message per call."""

    name = "policy"

    @abstractmethod
    def act(self, obs: Observation) -> AssistantTurn:
        """The next assistant message given the conversation so far."""


class OraclePolicy(Policy):
    """The scripted teacher: required tool calls in order, then a templated reply.

    `reasoning_tokens` 0: one short sentence of reasoning per message; N > 0: a grounded
    deliberation of about N simulator tokens (`hat_core.sim.reasoning.deliberate`).
    `plan` "anchored" quotes the skill and the tool before a call as their lines of the
    prompt show them (`hat_core.sim.replies.plan`); "plain" names them."""

    name = "oracle"

    def __init__(self, reasoning_tokens: int = 0, plan: str = "plain"):
        if reasoning_tokens < 0:
            raise ValueError(f"reasoning_tokens must be >= 0, got {reasoning_tokens}")
        if plan not in replies.PLAN_STYLES:
            raise ValueError(f"plan must be one of {replies.PLAN_STYLES}, got {plan!r}")
        self.reasoning_tokens = reasoning_tokens
        self.plan = plan

    def act(self, obs: Observation) -> AssistantTurn:
        binding = bind(obs.harness, obs.rename_map)
        truth = obs.scenario.turns[obs.turn]
        done, results, n_calls = _read(obs.messages, binding)
        skill = binding.skill_names_by_id.get(truth.skill)
        for expected in truth.required:
            tb = binding.tools_by_id.get(expected.tool_id)
            if tb is not None and expected.tool_id not in done:
                call = _call(binding, expected, f"call_{obs.turn}_{n_calls}")
                reasoning = (deliberate(binding, truth, skill or "", self.reasoning_tokens, tb)
                             if self.reasoning_tokens else self._plan(obs.harness, truth.skill,
                                                                      skill or "", tb))
                return AssistantTurn(reasoning=reasoning, tool_calls=(call,), skill=skill)
        text = replies.compose(obs.scenario, truth, results)
        reasoning = (deliberate(binding, truth, skill or "", self.reasoning_tokens)
                     if self.reasoning_tokens else replies.conclude(truth, skill or ""))
        return AssistantTurn(content=text, reasoning=reasoning, skill=skill)

    def _plan(self, harness: Harness, skill_id: str, skill: str, tb: ToolBinding) -> str:
        if self.plan != "anchored" or not skill:
            return replies.plan(skill, tb.name)
        return replies.plan(skill, tb.name,
                            listed_line(harness.skill(skill_id).description, skill),
                            listed_line(harness.tool(tb.tool_id).description, tb.name))


def _read(messages: Sequence[dict], binding: Binding) -> tuple[set[str], dict[str, Any], int]:
    """Tool ids called in the current viewer turn, latest ok result per tool id, call count."""
    names: dict[str, str] = {}
    done: set[str] = set()
    results: dict[str, Any] = {}
    n_calls = 0
    for msg in messages:
        role = msg["role"]
        if role == "user":
            done = set()
        elif role == "assistant":
            for c in msg.get("tool_calls") or ():
                n_calls += 1
                tb = binding.tools_by_name.get(c["function"]["name"])
                if tb is not None:
                    names[c["id"]] = tb.tool_id
        elif role == "tool" and msg["tool_call_id"] in names:
            tool_id = names[msg["tool_call_id"]]
            content = json.loads(msg["content"])
            if content.get("error") != "blocked_by_hook":
                done.add(tool_id)
            if "error" not in content:
                results[tool_id] = content
    return done, results, n_calls


def _call(binding: Binding, expected: ExpectedCall, call_id: str) -> ToolCall:
    tb = binding.tools_by_id[expected.tool_id]
    args = dict(expected.args)
    if expected.tool_id == "handoff.human":
        args["reason"] = "订单异常，需要人工处理"
    surface = tb.surface_args(args)
    props = binding.harness.tool(expected.tool_id).parameters.get("properties", {})
    for name, value in surface.items():
        if isinstance(value, list) and props.get(name, {}).get("type") == "string":
            surface[name] = ",".join(value)
    return ToolCall(id=call_id, name=tb.name, arguments=json.dumps(surface, ensure_ascii=False))


class MemorisingPolicy(Policy):
    """The oracle of one memorised harness, blind to the harness it is actually shown."""

    name = "memorising"

    def __init__(self, memorised: Harness):
        self.memorised = memorised
        self._oracle = OraclePolicy()

    def act(self, obs: Observation) -> AssistantTurn:
        return self._oracle.act(replace(obs, harness=self.memorised, rename_map=None))


class RandomPolicy(Policy):
    """Random tool calls with random arguments, or a random reply."""

    name = "random"
    REPLIES = ("好的～", "这个我不清楚呢", "全网最好的，闭眼入！", "价格是99元，快拍！")

    def __init__(self, rng: random.Random):
        self.rng = rng

    def act(self, obs: Observation) -> AssistantTurn:
        calls_so_far = sum(1 for m in obs.messages if m["role"] == "tool")
        if obs.tools and self.rng.random() < 0.5 and calls_so_far < 3:
            fn = self.rng.choice(list(obs.tools))["function"]
            args = {p: self.rng.choice(("P1001", 1, "杭州", None))
                    for p in fn["parameters"].get("properties", {})}
            call = ToolCall(f"call_r{calls_so_far}", fn["name"], json.dumps(args))
            return AssistantTurn(tool_calls=(call,))
        return AssistantTurn(content=self.rng.choice(self.REPLIES),
                             reasoning="想一想" * self.rng.randint(0, 80))


class ScriptedPolicy(Policy):
    """Plays `turns` in order, then an empty reply (for tests)."""

    name = "scripted"

    def __init__(self, turns: Sequence[AssistantTurn]):
        self.turns = list(turns)
        self.calls = 0

    def act(self, obs: Observation) -> AssistantTurn:
        self.calls += 1
        return self.turns.pop(0) if self.turns else AssistantTurn(content="")


POLICIES = ("oracle", "random", "memorising")
