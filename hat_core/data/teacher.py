"""Teachers: the policies that play the rollouts a training set is made of.

A `Teacher` is a simulator `Policy` (`act(obs) -> AssistantTurn`) with a `concurrency` (how
many episodes the rollout may play at once on a thread pool). Three kinds, one interface:

- `OracleTeacher(slip_rate, seed, reasoning_tokens)`: the scripted oracle (the embedded
  default; `reasoning_tokens` N > 0 makes it deliberate about N tokens a message). In a seeded
  share of episodes it first trips one of the harness's `block_retry` hooks (a reply with a
  forbidden word, or a tool call that breaks the schema) and then recovers, so the hook-retry
  policy has real retries to work on.
- `TransformersTeacher(model_dir)`: a local model directory (greedy).
- `OpenAITeacher(base_url, model)`: any OpenAI-compatible endpoint with tool calling (vLLM,
  a hosted model), with per-request timeout and retries.

The LLM teachers share `ChatTeacher`, whose only network call is `_chat`; tests fake it by
subclassing `OpenAITeacher`. A request that still fails after its retries raises
`TeacherError`; the rollout records that episode as rejected (`teacher_error`).

    teacher = make_teacher(TeacherConfig(kind="oracle"), seed=0)
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from abc import abstractmethod

from hat_core.data.config import TeacherConfig
from hat_core.errors import HatError, Problem
from hat_core.harness.model import ArgumentSchema, BlockRetry, ForbiddenWords, Harness
from hat_core.sim.episode import AssistantTurn, ToolCall
from hat_core.sim.policy import Observation, OraclePolicy, Policy


class TeacherError(HatError):
    """A teacher that could not answer (after its retries)."""


class Teacher(Policy):
    """A policy that produces training trajectories; `concurrency` episodes may run at once."""

    name = "teacher"
    concurrency = 1

    def close(self) -> None:
        """Release connections or models (nothing by default)."""


class OracleTeacher(Teacher):
    """The scripted oracle, slipping into a hook-forced retry in a seeded share of episodes."""

    name = "oracle"

    def __init__(self, slip_rate: float = 0.1, seed: int = 0, reasoning_tokens: int = 0,
                 plan: str = "plain"):
        self.slip_rate, self.seed = slip_rate, seed
        self._oracle = OraclePolicy(reasoning_tokens, plan)

    def act(self, obs: Observation) -> AssistantTurn:
        turn = self._oracle.act(obs)
        slip = self.slip_kind(obs)
        if slip is None or not _first_attempt(obs):
            return turn
        if slip == "call" and turn.tool_calls:
            return _bad_call(turn, obs.harness)
        word = _forbidden_word(obs.harness)
        if slip == "reply" and not turn.tool_calls and word:
            return AssistantTurn(content=f"{word}的选择！{turn.content}",
                                 reasoning=turn.reasoning, skill=turn.skill)
        return turn

    def slip_kind(self, obs: Observation) -> str | None:
        """"call", "reply" or None for this episode (only in its first viewer turn)."""
        if self.slip_rate <= 0 or obs.turn != 0:
            return None
        first = obs.tools[0]["function"]["name"] if obs.tools else ""
        key = f"{self.seed}|{obs.scenario.id}|{len(obs.tools)}|{first}"
        digest = hashlib.sha256(key.encode()).digest()
        if int.from_bytes(digest[:4], "big") / 2**32 >= self.slip_rate:
            return None
        can_call = _blocks_bad_arguments(obs.harness)
        can_reply = _forbidden_word(obs.harness) is not None
        if can_call and (digest[4] % 2 or not can_reply):
            return "call"
        return "reply" if can_reply else None


def _first_attempt(obs: Observation) -> bool:
    """No hook has fired yet in the current viewer turn."""
    for msg in reversed(obs.messages):
        if msg["role"] == "user":
            return True
        if msg["role"] == "system" or (msg["role"] == "tool"
                                       and '"blocked_by_hook"' in msg.get("content", "")):
            return False
    return True


def _bad_call(turn: AssistantTurn, harness: Harness) -> AssistantTurn:
    call = turn.tool_calls[0]
    tool = harness.tool_by_name(call.name)
    if tool is None or not tool.parameters.get("required"):
        return turn
    bad = ToolCall(id=call.id + "_x", name=call.name, arguments="{}")
    return AssistantTurn(content=turn.content, reasoning=turn.reasoning, tool_calls=(bad,),
                         skill=turn.skill)


def _blocks_bad_arguments(harness: Harness) -> bool:
    return any(h.event == "before_tool_call" and isinstance(h.condition, ArgumentSchema)
               and isinstance(h.action, BlockRetry) for h in harness.hooks)


def _forbidden_word(harness: Harness) -> str | None:
    for h in harness.hooks:
        if (h.event == "before_response" and isinstance(h.condition, ForbiddenWords)
                and isinstance(h.action, BlockRetry) and h.condition.words):
            return h.condition.words[0]
    return None


class ChatTeacher(Teacher):
    """A language model behind `_chat`; retries failed requests with exponential backoff."""

    def __init__(self, *, concurrency: int = 4, retries: int = 2, timeout_s: float = 60.0,
                 max_tokens: int = 512, temperature: float = 0.0, backoff_s: float = 0.5):
        self.concurrency, self.retries, self.timeout_s = concurrency, retries, timeout_s
        self.max_tokens, self.temperature, self.backoff_s = max_tokens, temperature, backoff_s

    @abstractmethod
    def _chat(self, messages: list[dict], tools: list[dict]):
        """One model answer as `hat_core.inference.protocol.AssistantOutput`."""

    def act(self, obs: Observation) -> AssistantTurn:
        out = self._answer(list(obs.messages), list(obs.tools))
        n = sum(len(m.get("tool_calls") or ()) for m in obs.messages)
        calls = tuple(ToolCall(id=f"call_{obs.turn}_{n + i}", name=c.name,
                               arguments=_json_text(c.arguments))
                      for i, c in enumerate(out.tool_calls))
        return AssistantTurn(content=out.content or "", reasoning=out.reasoning_content or "",
                             tool_calls=calls)

    def _answer(self, messages: list[dict], tools: list[dict]):
        errors = []
        for attempt in range(self.retries + 1):
            try:
                return self._chat(messages, tools)
            except (HatError, OSError, TimeoutError, ValueError) as exc:
                errors.append(Problem(f"attempt {attempt + 1}", f"{type(exc).__name__}: {exc}"))
            if attempt < self.retries:
                time.sleep(self.backoff_s * 2 ** attempt)
        raise TeacherError(f"teacher {self.name} failed {self.retries + 1} time(s)", errors)


def _json_text(arguments) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


class OpenAITeacher(ChatTeacher):
    """Any OpenAI-compatible `/v1/chat/completions` endpoint with tool calling."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, **kwargs):
        from hat_core.inference.backends import OpenAIBackend

        super().__init__(**kwargs)
        self.name, self.base_url, self.model = model, base_url, model
        # One client shared by the worker threads (the openai client is thread-safe); retries
        # happen here, in `ChatTeacher._answer`, not in the backend.
        self._backend = OpenAIBackend(base_url, model, timeout_s=self.timeout_s, retries=0,
                                      api_key=api_key)

    def _chat(self, messages: list[dict], tools: list[dict]):
        # Standard chat-completions fields only: earlier reasoning is not sent back.
        plain = [{k: v for k, v in m.items() if k != "reasoning_content"} for m in messages]
        return self._backend.chat(plain, tools, max_tokens=self.max_tokens,
                                  temperature=self.temperature)

    def close(self) -> None:
        self._backend.close()


class TransformersTeacher(ChatTeacher):
    """A local transformers model directory (greedy decoding; one episode at a time)."""

    def __init__(self, model_dir: str, **kwargs):
        super().__init__(**{**kwargs, "concurrency": 1})
        from hat_core.inference.backends import TransformersBackend

        self._backend = TransformersBackend(model_dir)
        self.name = self._backend.name

    def _chat(self, messages: list[dict], tools: list[dict]):
        return self._backend.chat(messages, tools, max_tokens=self.max_tokens)


def make_teacher(config: TeacherConfig, seed: int = 0) -> Teacher:
    """The teacher a config names."""
    common = {"retries": config.retries, "timeout_s": config.timeout_s,
              "max_tokens": config.max_tokens, "temperature": config.temperature}
    if config.kind == "openai":
        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        return OpenAITeacher(config.base_url or "", config.model or "", api_key=key,
                             concurrency=config.concurrency, **common)
    if config.kind == "transformers":
        return TransformersTeacher(config.model_dir or "", **common)
    return OracleTeacher(config.slip_rate, seed, config.reasoning_tokens, config.plan)
