"""The hook-retry policy: what a kept trajectory with a hook-forced retry teaches.

Most such trajectories keep only the final correct behaviour: the rejected attempts (a reply a
`before_response` hook blocked, with the hook's feedback message; an assistant message whose
tool calls a `before_tool_call` hook all blocked, with the blocked tool messages) are cut out.
A configurable share keeps the full retry, to teach recovery from hook feedback.

    out, stats = apply_retry_policy(trajectories, share=0.1, seed=0)

Exactly `round(share * n)` of the n retried trajectories keep the full retry; which ones is
fixed by the seed and the trajectories' identities (scenario, surface), not by their order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from hat_core.data.trajectory import Trajectory

BLOCKED = '"blocked_by_hook"'


def final_only(messages: Sequence[dict]) -> tuple[dict, ...]:
    """The conversation without its hook-rejected attempts."""
    msgs = list(messages)
    drop: set[int] = set()
    for i, msg in enumerate(msgs):
        if msg["role"] == "system" and i > 0 and msgs[i - 1]["role"] == "assistant":
            drop |= {i - 1, i}
        elif msg["role"] == "assistant" and msg.get("tool_calls"):
            replies = _tool_replies(msgs, i)
            if replies and all(BLOCKED in (msgs[j].get("content") or "") for j in replies):
                drop |= {i, *replies}
    return tuple(m for i, m in enumerate(msgs) if i not in drop)


def _tool_replies(msgs: list[dict], index: int) -> list[int]:
    ids = {c.get("id") for c in msgs[index].get("tool_calls") or ()}
    out = []
    for j in range(index + 1, len(msgs)):
        if msgs[j]["role"] != "tool":
            break
        if msgs[j].get("tool_call_id") in ids:
            out.append(j)
    return out if len(out) == len(ids) else []


def _order_key(t: Trajectory, seed: int) -> str:
    return hashlib.sha256(f"{seed}|{t.scenario_id}|{t.variant_id}|{t.harness_hash}"
                          .encode()).hexdigest()


def apply_retry_policy(trajectories: Sequence[Trajectory], share: float, seed: int
                       ) -> tuple[list[Trajectory], dict[str, int]]:
    """Trajectories with the policy applied (same order) and counts: `retried`, `full`,
    `final_only`."""
    retried = [i for i, t in enumerate(trajectories) if t.retries > 0]
    n_full = round(share * len(retried))
    ranked = sorted(retried, key=lambda i: _order_key(trajectories[i], seed))
    full = set(ranked[:n_full])
    out = []
    for i, t in enumerate(trajectories):
        if i in full:
            out.append(replace(t, retry_mode="full"))
        elif t.retries > 0:
            out.append(replace(t, messages=final_only(t.messages), retry_mode="final_only"))
        else:
            out.append(t)
    return out, {"retried": len(retried), "full": len(full),
                 "final_only": len(retried) - len(full)}
