"""The episode: what a policy emits (`AssistantTurn`), what happened (`Episode`).

A trajectory is a list of OpenAI-style messages: `system` (the rendered harness prompt; later
`system` messages carry hook feedback), `user` (one per viewer turn), `assistant` (optional
`reasoning_content`, optional `tool_calls: [{"id", "type": "function", "function": {"name",
"arguments": JSON string}}]`) and `tool` (`tool_call_id`, `content` as a JSON string; failures
are `{"error": <error_type>, "message": ...}`).

`analyse(messages, binding, declared_skills)` reads a trajectory back into `TurnRecord`s (the
calls with tool ids and canonical arguments, the final reply, the chosen skill, the reasoning
token counts): the runner uses it, and so do rewards for trajectories built elsewhere (TRL).

Reasoning tokens are counted by `count_tokens`: every CJK character is one token, and every
whitespace-separated run of other characters is one token. It is deterministic and needs no
tokenizer; `count_tokens("先查价格 then calc")` is 6.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from hat_core.sim.binding import Binding

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")


def count_tokens(text: str | None) -> int:
    """Reasoning tokens: CJK characters plus whitespace-separated runs of anything else."""
    return len(_TOKEN.findall(text)) if text else 0


@dataclass(frozen=True)
class ToolCall:
    """A call the policy makes: `arguments` is the JSON text it wrote."""

    id: str
    name: str
    arguments: str

    def message(self) -> dict:
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class AssistantTurn:
    """One assistant message from a policy.

    `skill` is the name (in the current harness) of the skill the policy says it is using;
    it is mapped back to the skill id through the harness. When absent, the skill is inferred
    from the first tool called in the viewer turn.
    """

    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    skill: str | None = None

    def message(self, content: str | None = None) -> dict:
        msg: dict[str, Any] = {"role": "assistant",
                               "content": self.content if content is None else content}
        if self.reasoning:
            msg["reasoning_content"] = self.reasoning
        if self.tool_calls:
            msg["tool_calls"] = [c.message() for c in self.tool_calls]
        return msg


@dataclass(frozen=True)
class CallRecord:
    """One tool call as executed: canonical arguments (empty when unbound) and the outcome."""

    name: str
    tool_id: str | None
    args: dict
    ok: bool
    error_type: str | None
    content: Any


@dataclass(frozen=True)
class HookFiring:
    """A hook that fired: in which viewer turn, on which attempt of that turn."""

    hook_id: str
    event: str
    action: str
    message: str
    turn: int
    attempt: int


@dataclass(frozen=True)
class TurnRecord:
    """What the policy did for one viewer turn."""

    calls: tuple[CallRecord, ...]
    reply: str | None
    skill: str | None  # skill id
    skill_source: str  # "declared", "inferred" or "none"
    reasoning_tokens: tuple[int, ...]
    attempts: int  # assistant messages in the turn


@dataclass(frozen=True)
class Episode:
    """A recorded episode: the trajectory, its analysis and the metadata."""

    scenario_id: str
    harness_hash: str
    rename_map: Mapping[str, Mapping[str, str]]
    messages: tuple[dict, ...]
    turns: tuple[TurnRecord, ...]
    hook_firings: tuple[HookFiring, ...] = ()
    retries: int = 0
    handed_off: bool = False

    def to_dict(self) -> dict:
        """JSON-ready: messages, metadata and the analysis."""
        return asdict(self)


def analyse(messages: Sequence[dict], binding: Binding,
            declared_skills: Sequence[str | None] = ()) -> tuple[TurnRecord, ...]:
    """Read a trajectory into one `TurnRecord` per user message."""
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m["role"] == "tool"}
    turns: list[list[dict]] = []
    for msg in messages:
        if msg["role"] == "user":
            turns.append([])
        elif turns and msg["role"] == "assistant":
            turns[-1].append(msg)
    declared = list(declared_skills) + [None] * (len(turns) - len(declared_skills))
    return tuple(_turn(ms, results, binding, d) for ms, d in zip(turns, declared, strict=True))


def _turn(assistant: list[dict], results: dict, binding: Binding,
          declared: str | None) -> TurnRecord:
    calls = tuple(_call(c, results.get(c.get("id")), binding)
                  for m in assistant for c in m.get("tool_calls") or ())
    finals = [m for m in assistant if not m.get("tool_calls")]
    reply = finals[-1].get("content") or "" if finals else None
    skill, source = _skill(declared, calls, binding)
    return TurnRecord(calls=calls, reply=reply, skill=skill, skill_source=source,
                      reasoning_tokens=tuple(count_tokens(m.get("reasoning_content"))
                                             for m in assistant),
                      attempts=len(assistant))


def _call(call: dict, result: str | None, binding: Binding) -> CallRecord:
    fn = call.get("function", {})
    name = fn.get("name", "")
    tb = binding.tools_by_name.get(name)
    args = _json(fn.get("arguments"))
    canonical = tb.canonical_args(args) if tb and isinstance(args, dict) else {}
    content = _json(result)
    failed = isinstance(content, dict) and "error" in content and len(content) == 2
    return CallRecord(name=name, tool_id=tb.tool_id if tb else None, args=canonical,
                      ok=result is not None and not failed,
                      error_type=(content["error"] if failed
                                  else None if result is not None else "no_result"),
                      content=content)


def _skill(declared: str | None, calls: tuple[CallRecord, ...],
           binding: Binding) -> tuple[str | None, str]:
    if declared is not None:
        return binding.skill_ids_by_name.get(declared, f"?{declared}"), "declared"
    for call in calls:
        if call.tool_id in binding.skill_of_tool:
            return binding.skill_of_tool[call.tool_id], "inferred"
    return None, "none"


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def episode_from_messages(messages: Sequence[dict], binding: Binding, *, scenario_id: str = "",
                          declared_skills: Sequence[str | None] = ()) -> Episode:
    """An `Episode` for a trajectory recorded elsewhere (a TRL completion, a logged chat)."""
    msgs = tuple(messages)
    return Episode(scenario_id=scenario_id, harness_hash=binding.harness_hash,
                   rename_map=binding.rename_map, messages=msgs,
                   turns=analyse(msgs, binding, declared_skills),
                   retries=sum(1 for m in msgs[1:] if m["role"] == "system"))
