"""The simulator's rewards as GRPO reward functions, one per reward, plus flat-group counting.

TRL hands a reward function the prompt messages and the completion messages of a tool rollout
(assistant messages with `tool_calls` whose `arguments` are dicts, `tool` messages without ids).
The simulator scores OpenAI-style trajectories (ids pairing calls and results, arguments as JSON
text, reasoning in `reasoning_content`). `sim_trajectory` converts; `reward_functions(weights)`
returns one function per named reward, each called `<name>` so TRL logs `rewards/<name>/mean`
as its own curve; the CoT length penalty is the negative `cot_length_penalty` reward.

`FlatGroups` counts groups that carry no signal: under GRPO (sum then normalise) a group whose
weighted totals are all equal; under GDPO (normalise then sum) a group in which every reward
is constant. It logs `flat_groups/count` and `flat_groups/share` per batch through TRL's
`log_metric` and keeps running totals for the stage result.

`RolloutLog` writes what the rollouts were, as the rewards saw them: per step up to `per_step`
completions (the first groups of the batch) as JSON lines in `OUTPUT/rollouts.jsonl`, each
with the step, the variant, the scenario, the viewer message, the trajectory after the prompt
and every reward. It is how a reward that does not move can be read against the evaluation's
transcript of the same scenario.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hat_core.sim.rewards import scores_for

EPS = 1e-9


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value or {}, ensure_ascii=False)


def _assistant(message: dict, call_ids: list[str], counter: list[int]) -> dict:
    content = message.get("content") or ""
    if not isinstance(content, str):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    reasoning = message.get("reasoning_content") or message.get("thinking") or ""
    if not reasoning and "</think>" in content:
        head, content = content.split("</think>", 1)
        reasoning = head.replace("<think>", "").strip()
    out = {"role": "assistant", "content": content.strip()}
    if reasoning:
        out["reasoning_content"] = reasoning.strip()
    calls = []
    for call in message.get("tool_calls") or ():
        fn = call.get("function", call)
        call_id = f"call_{counter[0]}"
        counter[0] += 1
        calls.append({"id": call_id, "type": "function",
                      "function": {"name": fn.get("name", ""),
                                   "arguments": _arguments(fn.get("arguments"))}})
        call_ids.append(call_id)
    if calls:
        out["tool_calls"] = calls
    return out


def sim_trajectory(prompt: Any, completion: Any) -> list[dict]:
    """A TRL prompt + completion as a simulator trajectory (OpenAI-style messages)."""
    from hat_core.training.probe import assistant_turn

    messages = [dict(m) for m in prompt] if isinstance(prompt, list) else [
        {"role": "user", "content": str(prompt)}]
    if isinstance(completion, str):
        return messages + [assistant_turn(completion).message()]
    pending: list[str] = []
    counter = [0]
    for message in completion:
        if message.get("role") == "assistant":
            messages.append(_assistant(message, pending, counter))
        elif message.get("role") == "tool":
            call_id = pending.pop(0) if pending else f"call_orphan_{counter[0]}"
            content = message.get("content")
            messages.append({"role": "tool", "tool_call_id": call_id,
                             "content": content if isinstance(content, str)
                             else json.dumps(content, ensure_ascii=False)})
    return messages


def batch_rewards(prompts, completions, **kwargs) -> list[dict[str, float]]:
    """Every reward of every completion (penalty negated), as the simulator scores them."""
    trajectories = [sim_trajectory(p, c) for p, c in zip(prompts, completions, strict=True)]
    columns = {k: kwargs[k] for k in ("scenario", "harness", "rename_map") if k in kwargs}
    scores = scores_for(prompts, completions, trajectory=trajectories, **columns)
    return [s.rewards() | {"cot_length_penalty": -s.cot_penalty} for s in scores]


@dataclass
class FlatGroups:
    """Running count of groups with no learning signal (see the module docstring)."""

    group_size: int
    weights: Mapping[str, float]
    aggregation: str = "gdpo"
    groups: int = 0
    flat: int = 0
    per_batch: list[tuple[int, int]] = field(default_factory=list)

    def observe(self, rewards: Sequence[Mapping[str, float]]) -> tuple[int, int]:
        """Count the flat groups of one batch (consecutive runs of `group_size`)."""
        n = len(rewards) // self.group_size
        flat = sum(self.is_flat(rewards[i * self.group_size:(i + 1) * self.group_size])
                   for i in range(n))
        self.groups, self.flat = self.groups + n, self.flat + flat
        self.per_batch.append((flat, n))
        return flat, n

    def is_flat(self, group: Sequence[Mapping[str, float]]) -> bool:
        if self.aggregation == "grpo":
            totals = [sum(w * r[k] for k, w in self.weights.items()) for r in group]
            return max(totals) - min(totals) < EPS
        return all(max(r[k] for r in group) - min(r[k] for r in group) < EPS
                   for k in self.weights)

    @property
    def share(self) -> float:
        return self.flat / self.groups if self.groups else 0.0

    def summary(self) -> dict:
        return {"flat_groups": self.flat, "groups": self.groups,
                "flat_group_share": round(self.share, 4)}


@dataclass
class RolloutLog:
    """Up to `per_step` completions of every step, with their rewards, as JSON lines."""

    path: Path
    per_step: int = 16

    def write(self, prompts, completions, rewards: Sequence[Mapping[str, float]],
              kwargs: Mapping[str, Any]) -> None:
        if self.per_step <= 0:
            return
        state = kwargs.get("trainer_state")
        step = getattr(state, "global_step", None)
        lines = []
        for i, (prompt, completion) in enumerate(zip(prompts, completions, strict=True)):
            if i >= self.per_step:
                break
            trajectory = sim_trajectory(prompt, completion)
            scenario = _cell(kwargs, "scenario", i)
            lines.append(json.dumps({
                "step": step, "index": i, "environment": _cell(kwargs, "environment", i),
                "scenario_id": _scenario_id(scenario),
                "user": prompt[-1]["content"] if isinstance(prompt, list) else str(prompt),
                "completion": trajectory[len(prompt) if isinstance(prompt, list) else 1:],
                "rewards": dict(rewards[i])}, ensure_ascii=False, default=str))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write("".join(line + "\n" for line in lines))


def _cell(kwargs: Mapping[str, Any], name: str, i: int) -> Any:
    values = kwargs.get(name)
    return values[i] if values is not None and i < len(values) else None


def _scenario_id(scenario: Any) -> str | None:
    if isinstance(scenario, str):
        try:
            scenario = json.loads(scenario)
        except ValueError:
            return None
    return scenario.get("id") if isinstance(scenario, dict) else None


def reward_functions(weights: Mapping[str, float], flat_groups: FlatGroups | None = None,
                     rollout_log: RolloutLog | None = None) -> list[Callable]:
    """One TRL reward function per named reward; the first also feeds `flat_groups` and
    `rollout_log`."""
    names = list(weights)
    # TRL calls every reward function on the same batch object in turn: score it once. The
    # cache keeps the batch alive, so its id cannot be reused by a later batch.
    cache: dict[str, Any] = {"batch": None, "rewards": []}

    def scored(prompts, completions, kwargs) -> list[dict[str, float]]:
        if cache["batch"] is not completions:
            cache["batch"] = completions
            cache["rewards"] = batch_rewards(prompts, completions, **kwargs)
            if flat_groups is not None:
                _log_flat(flat_groups, cache["rewards"], kwargs.get("log_metric"))
            if rollout_log is not None:
                rollout_log.write(prompts, completions, cache["rewards"], kwargs)
        return cache["rewards"]

    def make(name: str) -> Callable:
        def reward(prompts, completions, completion_ids=None, **kwargs) -> list[float]:
            return [r[name] for r in scored(prompts, completions, kwargs)]

        reward.__name__ = reward.__qualname__ = name
        return reward

    return [make(name) for name in names]


def _log_flat(flat_groups: FlatGroups, rewards, log_metric) -> None:
    flat, groups = flat_groups.observe(rewards)
    if log_metric is not None and groups:
        log_metric("flat_groups/count", float(flat))
        log_metric("flat_groups/share", flat / groups)
