"""What the held-call tests share: the tool calls a backend makes playing T1 on a harness, and
the check that free decoding strays from the offered tools while held decoding does not."""

from __future__ import annotations

import json

from hat_core.evaluation.policy import BackendPolicy
from hat_core.evaluation.suites.qa import T1Suite
from hat_core.harness.render import use_profile


def played_calls(backend, harness, episodes: int = 8) -> list[dict]:
    """Every tool call (`{"name", "arguments"}`) of `backend` over T1 on `harness`."""
    with use_profile("compact"):
        outcomes = T1Suite().play(BackendPolicy(backend, max_tokens=160), harness,
                                  episodes=episodes, seed=0)
    return [c["function"] for o in outcomes for m in o.episode.messages
            if m.get("role") == "assistant" for c in m.get("tool_calls") or ()]


def assert_only_held_calls_stay_offered(free_calls: list[dict], held_calls: list[dict],
                                        harness) -> None:
    params = {t.name: set(t.parameters.get("properties", {})) for t in harness.tools}
    # the untrained base spells names the harness does not offer; held to it, it cannot
    assert any(c["name"] not in params for c in free_calls)
    assert held_calls and all(c["name"] in params for c in held_calls)
    for call in held_calls:
        try:
            args = json.loads(call["arguments"])
        except json.JSONDecodeError:  # a value may still be malformed: only keys are held
            continue
        if isinstance(args, dict):
            assert set(args) <= params[call["name"]], call
