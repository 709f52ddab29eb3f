"""`BackendPolicy`: any `InferenceBackend` (a local model, an endpoint) as a simulator policy.

    policy = BackendPolicy(TransformersBackend("models/champion"), max_tokens=256)
    episode = run_episode(harness, scenario, catalog, policy)

Each step sends the conversation so far (`obs.messages`, OpenAI style) and the harness's tool
list (`obs.tools`) to `backend.chat`, and turns the `AssistantOutput` into the simulator's
`AssistantTurn`: content, reasoning and tool calls (ids `call_<step>_<i>`, unique in the
episode). A backend with `constrain_tools` (`TransformersBackend(..., constrain_tools=True)`)
is also given the surface's tools (`allowed_tools`: names and parameters as the prompt shows
them), which it holds its calls' names and argument keys to. A malformed tool call
(`invalid_tool_calls`) is never dropped: it becomes a call the simulator scores as wrong:
the name found in its text with its raw text as arguments (a `bad_arguments` failure), or
the name `INVALID_CALL` (an `unknown_tool`, scored as a hallucinated call). With
`skill_from_content` the declared skill is the first skill name of the current harness that
the reasoning (else the content) mentions, as the oracle's trajectories do
("观众的问题属于{skill}…"); otherwise the simulator infers it from the tools.

`as_policy(model)` accepts a `Policy` as is and wraps an `InferenceBackend`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hat_core.inference.protocol import AssistantOutput, InferenceBackend
from hat_core.sim.episode import AssistantTurn, ToolCall
from hat_core.sim.policy import Observation, Policy

INVALID_CALL = "<invalid_tool_call>"
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_KEYS = ("role", "content", "reasoning_content", "tool_calls", "tool_call_id")


class BackendPolicy(Policy):
    """A chat model behind an `InferenceBackend`, playing the assistant (see module doc)."""

    name = "backend"

    def __init__(self, backend: InferenceBackend, *, max_tokens: int = 512,
                 temperature: float = 0.0, skill_from_content: bool = True):
        self.backend, self.max_tokens, self.temperature = backend, max_tokens, temperature
        self.skill_from_content = skill_from_content
        self.name = f"backend:{getattr(backend, 'name', type(backend).__name__)}"

    def with_backend(self, backend: InferenceBackend) -> BackendPolicy:
        """This policy's settings with another backend (a lockstep round's stand-in)."""
        twin = BackendPolicy(backend, max_tokens=self.max_tokens, temperature=self.temperature,
                             skill_from_content=self.skill_from_content)
        twin.name = self.name
        return twin

    def act(self, obs: Observation) -> AssistantTurn:
        extra = {}
        if getattr(self.backend, "constrain_tools", False):  # the names the prompt offers
            extra["allowed_tools"] = [{"name": t.name, "parameters": t.parameters}
                                      for t in obs.harness.tools]
        out = self.backend.chat(chat_messages(obs.messages), tools=list(obs.tools) or None,
                                max_tokens=self.max_tokens, temperature=self.temperature,
                                **extra)
        skills = [s.name for s in obs.harness.skills] if self.skill_from_content else []
        return assistant_turn(out, call_prefix=f"call_{len(obs.messages)}", skill_names=skills)


def chat_messages(messages: Sequence[dict]) -> list[dict]:
    """Copies of the simulator's messages with only the keys chat APIs know."""
    return [{k: m[k] for k in _KEYS if k in m} for m in messages]


def assistant_turn(out: AssistantOutput, *, call_prefix: str = "call",
                   skill_names: Sequence[str] = ()) -> AssistantTurn:
    """An `AssistantOutput` as the simulator's `AssistantTurn` (invalid calls kept as wrong
    calls; the skill found by `mentioned_skill` when `skill_names` are given)."""
    calls = [ToolCall(f"{call_prefix}_{i}", c.name, c.arguments)
             for i, c in enumerate(out.tool_calls)]
    calls += [invalid_call(raw, f"{call_prefix}_{len(calls) + i}")
              for i, raw in enumerate(out.invalid_tool_calls)]
    skill = mentioned_skill(out.reasoning_content, skill_names) or \
        mentioned_skill(out.content, skill_names)
    return AssistantTurn(content=out.content, reasoning=out.reasoning_content,
                         tool_calls=tuple(calls), skill=skill)


def invalid_call(raw: str, call_id: str) -> ToolCall:
    """A malformed `<tool_call>` body as a call the simulator rejects."""
    found = _NAME.search(raw)
    return ToolCall(call_id, found.group(1) if found else INVALID_CALL, raw)


def mentioned_skill(text: str, skill_names: Sequence[str]) -> str | None:
    """The skill name mentioned first in `text` (the longest one at the same position)."""
    hits = [(text.find(n), -len(n), n) for n in skill_names if n and n in text]
    return min(hits)[2] if hits else None


def as_policy(model: Policy | InferenceBackend, *, max_tokens: int = 512) -> Policy:
    """A `Policy` as is (a `BackendPolicy` keeps its own `max_tokens`); an
    `InferenceBackend` wrapped in a `BackendPolicy` with `max_tokens`."""
    if isinstance(model, Policy):
        return model
    if isinstance(model, InferenceBackend):
        return BackendPolicy(model, max_tokens=max_tokens)
    raise TypeError(f"not a Policy or an InferenceBackend: {type(model).__name__}")


def backend_of(model: Policy | InferenceBackend) -> InferenceBackend | None:
    """The language model behind `model`, or None for a scripted policy (the oracle)."""
    if isinstance(model, BackendPolicy):
        return model.backend
    return model if isinstance(model, InferenceBackend) else None
