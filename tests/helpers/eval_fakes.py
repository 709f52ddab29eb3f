"""Fake language models for the evaluation tests: subclasses of the real `InferenceBackend`.

- `ScriptedBackend(outputs)`: answers each chat with the next `AssistantOutput` and records
  every request (`requests`: messages, tools, max_tokens).
- `OracleBackend(surfaces, scenarios)`: plays the simulator's oracle *through the chat
  interface*: it recognises the surface by the system prompt and the scenario by the first
  viewer message, asks `OraclePolicy` for the turn, and returns it as an `AssistantOutput`
  (tool calls as name + JSON arguments, the skill only mentioned in the reasoning). With
  `memorised=harness` it is the oracle of that harness whatever it is shown.
- `AnsweringJudge(base_url, model, answer=...)`: an `LLMJudge` whose one network call
  (`complete`) returns a fixed answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hat_core.inference.protocol import AssistantOutput, InferenceBackend, ToolCall
from hat_core.sim.binding import bind
from hat_core.sim.judge import LLMJudge
from hat_core.sim.policy import MemorisingPolicy, Observation, OraclePolicy


class ScriptedBackend(InferenceBackend):
    name = "scripted"

    def __init__(self, outputs: Sequence[AssistantOutput]):
        self.outputs = list(outputs)
        self.requests: list[dict] = []

    def chat(self, messages, tools=None, *, max_tokens=512, temperature=0.0):
        self.requests.append({"messages": messages, "tools": tools, "max_tokens": max_tokens})
        return self.outputs.pop(0) if self.outputs else AssistantOutput("")


class OracleBackend(InferenceBackend):
    name = "oracle-backend"

    def __init__(self, surfaces, scenarios, memorised=None):
        self.by_prompt = {bind(s.harness, s.binding_map).rendered.system_prompt: s
                          for s in surfaces}
        self.by_question = {sc.turns[0].user: sc for sc in scenarios}
        self.policy = MemorisingPolicy(memorised) if memorised else OraclePolicy()
        self.calls = 0

    def chat(self, messages, tools=None, *, max_tokens=512, temperature=0.0):
        self.calls += 1
        surface = self.by_prompt[messages[0]["content"]]
        users = [m for m in messages if m["role"] == "user"]
        scenario = self.by_question[users[0]["content"]]
        obs = Observation(messages, tools or [], surface.harness, scenario, len(users) - 1,
                          bind(surface.harness, surface.binding_map).rename_map)
        turn = self.policy.act(obs)
        return AssistantOutput(turn.content, turn.reasoning,
                               tuple(ToolCall(c.name, c.arguments) for c in turn.tool_calls))


@dataclass
class AnsweringJudge(LLMJudge):
    """An `LLMJudge` whose endpoint call returns `answer` (a JSON verdict); counts calls."""

    answer: str = '{"verdict": "wrong_tool", "reason": "the fake judge flags every case"}'
    calls: int = 0

    def complete(self, messages: list[dict]) -> str:
        self.calls += 1
        return self.answer
