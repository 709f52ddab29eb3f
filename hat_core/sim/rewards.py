"""The rewards with TRL's signature, and `REWARDS`, the registry by name.

Each function is `f(prompts, completions, completion_ids=None, **kwargs) -> list[float]`, as
TRL's `GRPOTrainer` calls reward functions; dataset columns arrive in `kwargs`:

- `scenario` (required): per row a `Scenario.to_dict()` dict or its JSON text.
- `harness` (required): per row a `Harness`, its `model_dump()` dict or JSON text.
- `trajectory` (optional): per row the full message list (or its JSON text, or an
  `Episode.to_dict()`); without it the trajectory is `prompt + completion` (conversational
  rows), or the prompt messages plus `{"role": "assistant", "content": completion}`.
- `rename_map` (optional): per row the HSA rename map of the variant.

The scoring itself is `hat_core.sim.scoring` (formulas there and in docs/simulator.md).
`cot_length_penalty` returns the penalty negated (in [-1, 0]) so that TRL's weighted sum
subtracts it; every other reward is in [0, 1].

Examples (the oracle's episode of a product question; see tests for more):
    accuracy_reward([prompt], [completion], scenario=[s], harness=[h]) -> [1.0]
    the same with the fact left out of the reply                       -> [0.5]
    a reply stating a price no tool returned                           -> [0.0]
    tool_rationality_reward with one call to an unknown tool added     -> [0.5]
    cot_length_penalty_reward with 150 reasoning tokens                -> [-0.5]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from hat_core.harness.io import harness_from_data
from hat_core.harness.model import Harness
from hat_core.sim.binding import bind
from hat_core.sim.episode import Episode, episode_from_messages
from hat_core.sim.scenarios import Scenario
from hat_core.sim.scoring import Scores, score_episode

RewardFunc = Callable[..., list[float]]
_HARNESSES: dict[str, Harness] = {}


def scores_for(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[Scores]:
    """Score every row of a TRL batch (see the module docstring for the columns)."""
    rows = len(completions)
    out = []
    for i in range(rows):
        scenario = _scenario(_column(kwargs, "scenario", i, required=True))
        harness = _harness(_column(kwargs, "harness", i, required=True))
        rename_map = _load(_column(kwargs, "rename_map", i)) or None
        messages = _messages(_column(kwargs, "trajectory", i), prompts[i] if prompts else [],
                             completions[i])
        binding = bind(harness, rename_map)
        episode = episode_from_messages(messages, binding, scenario_id=scenario.id)
        out.append(score_episode(episode, scenario, harness))
    return out


def _column(kwargs: dict, name: str, i: int, required: bool = False) -> Any:
    values = kwargs.get(name)
    if values is None:
        if required:
            raise ValueError(f"reward needs the dataset column {name!r} "
                             f"(got: {', '.join(sorted(kwargs)) or 'none'})")
        return None
    return values[i]


def _load(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _scenario(value: Any) -> Scenario:
    return value if isinstance(value, Scenario) else Scenario.from_dict(_load(value))


def _harness(value: Any) -> Harness:
    if isinstance(value, Harness):
        return value
    key = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    if key not in _HARNESSES:
        if len(_HARNESSES) > 64:
            _HARNESSES.clear()
        _HARNESSES[key] = harness_from_data(_load(value), source="harness column")
    return _HARNESSES[key]


def _messages(trajectory: Any, prompt: Any, completion: Any) -> list[dict]:
    trajectory = _load(trajectory)
    if isinstance(trajectory, dict):
        return list(trajectory["messages"])
    if trajectory is not None:
        return list(trajectory)
    prompt_msgs = list(prompt) if isinstance(prompt, list) else [
        {"role": "user", "content": str(prompt)}]
    if isinstance(completion, list):
        return prompt_msgs + list(completion)
    return prompt_msgs + [{"role": "assistant", "content": str(completion)}]


def accuracy_reward(prompts, completions, completion_ids=None, **kwargs) -> list[float]:
    """Right tools with right arguments, and the reply's facts match tools and ground truth.

    1.0: every required call made with matching arguments and every fact stated; 0.5: the
    calls are right but the reply misses its only fact; 0.0: the reply states a price no tool
    result (nor the viewer) gave.
    """
    return [s.accuracy for s in scores_for(prompts, completions, **kwargs)]


def effectiveness_reward(prompts, completions, completion_ids=None, **kwargs) -> list[float]:
    """The reply resolves the viewer's need: answers, a call to action, concise, compliant.

    1.0: an answer with a call to action within the length limit; 0.75: the same without the
    call to action the turn needs; 0.0: empty, or any forbidden wording.
    """
    return [s.effectiveness for s in scores_for(prompts, completions, **kwargs)]


def tool_rationality_reward(prompts, completions, completion_ids=None, **kwargs) -> list[float]:
    """No unnecessary, repeated, failed, mis-ordered or hallucinated calls.

    1.0: only the needed calls, in order; 0.75: one repeated call; 0.5: one call to a tool
    the harness does not have.
    """
    return [s.tool_rationality for s in scores_for(prompts, completions, **kwargs)]


def skill_selection_reward(prompts, completions, completion_ids=None, **kwargs) -> list[float]:
    """The chosen skill (declared, else inferred from the first tool) matches the intent.

    1.0: the expected skill; 0.0: another skill; 0.5: nothing to tell (no tools called).
    """
    return [s.skill_selection for s in scores_for(prompts, completions, **kwargs)]


def cot_length_penalty_reward(prompts, completions, completion_ids=None,
                              **kwargs) -> list[float]:
    """Minus the CoT length penalty: 0.0 up to 100 reasoning tokens, -0.5 at 150, -1.0 at 200+."""
    return [-s.cot_penalty for s in scores_for(prompts, completions, **kwargs)]


REWARDS: dict[str, RewardFunc] = {
    "accuracy": accuracy_reward,
    "effectiveness": effectiveness_reward,
    "tool_rationality": tool_rationality_reward,
    "skill_selection": skill_selection_reward,
    "cot_length_penalty": cot_length_penalty_reward,
}


def get_reward(name: str) -> RewardFunc:
    """The reward function called `name`; the error lists the valid names."""
    if name not in REWARDS:
        raise KeyError(f"unknown reward {name!r}; valid: {', '.join(REWARDS)}")
    return REWARDS[name]


def episode_rewards(episode: Episode, scenario: Scenario, harness: Harness) -> dict[str, float]:
    """The five values of one simulator episode, by reward name (penalty positive)."""
    return score_episode(episode, scenario, harness).rewards()
