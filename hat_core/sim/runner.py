"""The episode runner: a policy plays one scenario under one harness.

For each viewer turn the policy is asked for assistant messages until it replies without tool
calls (at most `max_steps` messages). Tool calls execute against the catalog through the
harness binding; hooks fire at their events (see `hat_core.sim.hooks`). A `block_retry` hook
rejects the step (a blocked tool call gets a `blocked_by_hook` tool message; a blocked reply
stays in the trajectory followed by a `system` message with the hook's message) and the
policy is asked again, at most `max_retries` times per viewer turn; after that the step goes
through and its outcome is scored. A `handoff` hook ends the episode with its message.

    episode = run_episode(harness, scenario, catalog, OraclePolicy())
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from hat_core.harness.model import Harness
from hat_core.sim.binding import Binding, bind
from hat_core.sim.catalog import Catalog
from hat_core.sim.episode import AssistantTurn, Episode, HookFiring, ToolCall, analyse
from hat_core.sim.hooks import (
    Firing,
    HookSet,
    check_call,
    check_error,
    check_response,
    check_result,
    compile_hooks,
    numbers_in,
)
from hat_core.sim.policy import Observation, Policy
from hat_core.sim.scenarios import Scenario
from hat_core.sim.tools import ToolResult, execute, failure

MAX_STEPS = 6
MAX_RETRIES = 2


@dataclass
class _State:
    binding: Binding
    hooks: HookSet
    catalog: Catalog
    messages: list[dict]
    firings: list[HookFiring] = field(default_factory=list)
    grounded: set[float] = field(default_factory=set)
    skills: list[str | None] = field(default_factory=list)
    retries: int = 0
    handed_off: bool = False


@dataclass
class _Turn:
    index: int
    retries: int = 0
    errors: int = 0
    attempt: int = 0


def run_episode(harness: Harness, scenario: Scenario, catalog: Catalog, policy: Policy, *,
                rename_map: Mapping[str, Mapping[str, str]] | None = None,
                max_steps: int = MAX_STEPS, max_retries: int = MAX_RETRIES) -> Episode:
    """Play `scenario` under `harness` with `policy`; the recorded `Episode`."""
    binding = bind(harness, rename_map)
    st = _State(binding, compile_hooks(harness), catalog,
                [{"role": "system", "content": binding.rendered.system_prompt}])
    for index, truth in enumerate(scenario.turns):
        st.messages.append({"role": "user", "content": truth.user})
        st.skills.append(None)
        _play_turn(st, policy, scenario, _Turn(index), max_steps, max_retries)
        if st.handed_off:
            break
    return Episode(
        scenario_id=scenario.id, harness_hash=binding.harness_hash,
        rename_map=binding.rename_map, messages=tuple(st.messages),
        turns=analyse(st.messages, binding, st.skills), hook_firings=tuple(st.firings),
        retries=st.retries, handed_off=st.handed_off,
    )


def _play_turn(st: _State, policy: Policy, scenario: Scenario, turn: _Turn,
               max_steps: int, max_retries: int) -> None:
    obs = Observation(st.messages, st.binding.rendered.tools, st.binding.harness, scenario,
                      turn.index, st.binding.rename_map)
    for _ in range(max_steps):
        turn.attempt += 1
        step = policy.act(obs)
        if step.skill is not None:
            st.skills[-1] = step.skill
        if step.tool_calls:
            st.messages.append(step.message())
            if _run_calls(st, step.tool_calls, turn, max_retries):
                return
            continue
        if _reply(st, step, turn, max_retries):
            return


def _run_calls(st: _State, calls: tuple[ToolCall, ...], turn: _Turn, max_retries: int) -> bool:
    """Execute a message's tool calls; True when a hook handed the episode off."""
    for call in calls:
        result, firing = _execute(st, call, turn, max_retries)
        st.messages.append({"role": "tool", "tool_call_id": call.id,
                            "content": json.dumps(result.message(), ensure_ascii=False)})
        if result.error_type == "blocked_by_hook":
            turn.retries += 1
            st.retries += 1
        elif not result.ok:
            turn.errors += 1
            firing = firing or check_error(st.hooks, turn.errors)
        else:
            st.grounded |= numbers_in(result.content)
            firing = firing or check_result(st.hooks, st.messages[-1]["content"])
        if firing is not None:
            _record(st, firing, turn)
            if firing.action == "handoff":
                return _hand_off(st, firing)
    return False


def _execute(st: _State, call: ToolCall, turn: _Turn,
             max_retries: int) -> tuple[ToolResult, Firing | None]:
    tb = st.binding.tools_by_name.get(call.name)
    if tb is None:
        names = "、".join(st.binding.tools_by_name)
        return failure("unknown_tool", f"没有名为 {call.name} 的工具；可用：{names}"), None
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        args = None
    schema_ok = isinstance(args, dict) and tb.validator.is_valid(args)
    firing = check_call(st.hooks, schema_ok, call.arguments) if st.hooks.at(
        "before_tool_call") else None
    if firing is not None and firing.action == "block_retry" and turn.retries < max_retries:
        return ToolResult(False, firing.message, "blocked_by_hook"), firing
    if not schema_ok:
        return failure("bad_arguments", _schema_error(tb.validator, args)), firing
    if not tb.implemented:
        return failure("not_implemented", f"工具 {call.name} 暂不可用"), firing
    return execute(st.catalog, tb.tool_id, tb.canonical_args(args)), firing


def _schema_error(validator, args) -> str:
    if not isinstance(args, dict):
        return "参数不是合法的 JSON 对象"
    error = next(iter(validator.iter_errors(args)))
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def _reply(st: _State, step: AssistantTurn, turn: _Turn, max_retries: int) -> bool:
    """Check a final reply; True when the turn is over, False when it must be retried."""
    firing, text, rewrites = check_response(st.hooks, step.content, st.grounded)
    for rewrite in rewrites:
        _record(st, rewrite, turn)
    if firing is not None:
        _record(st, firing, turn)
        if firing.action == "handoff":
            st.messages.append(step.message())
            return _hand_off(st, firing)
        if firing.action == "block_retry" and turn.retries < max_retries:
            turn.retries += 1
            st.retries += 1
            st.messages.append(step.message())
            st.messages.append({"role": "system", "content": firing.message})
            return False
    st.messages.append(step.message(text))
    return True


def _record(st: _State, firing: Firing, turn: _Turn) -> None:
    st.firings.append(HookFiring(firing.hook_id, firing.event, firing.action, firing.message,
                                 turn.index, turn.attempt))


def _hand_off(st: _State, firing: Firing) -> bool:
    st.messages.append({"role": "assistant", "content": firing.message})
    st.handed_off = True
    return True
