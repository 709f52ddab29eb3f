"""CoT length: reasoning tokens of tool-call turns and of reply turns (mean, P50, P95).

    stats = cot_lengths(episode.messages for episode in episodes)
    stats.tool_call.p50, stats.reply.mean

Every assistant message of the T1 episodes counts once: a *tool-call turn* when it carries
tool calls, a *reply turn* otherwise (messages written by a `handoff` hook are not the
model's and are skipped: they carry no reasoning and the runner adds them). Tokens are the
simulator's `count_tokens` (each CJK character, each whitespace-separated run of anything
else), so numbers compare across models without a tokenizer; percentiles are nearest rank
(`percentile.py`). The paper's HSA-RL cut tool-call CoT from about 291 to 171 tokens and
reply CoT from 94 to 37 (its tokenizer's tokens).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hat_core.evaluation.badcases import BadCaseSink
from hat_core.evaluation.cases import CaseOutcome, Progress, cap
from hat_core.evaluation.suites.base import SuiteResult
from hat_core.evaluation.suites.qa import T1Suite, need_harness
from hat_core.harness.model import Harness
from hat_core.inference.protocol import InferenceBackend
from hat_core.latency.percentile import Distribution, distribution
from hat_core.sim.episode import count_tokens
from hat_core.sim.policy import Policy
from hat_core.sim.runner import MAX_STEPS


@dataclass(frozen=True)
class CotLengths:
    """Reasoning-token distributions of tool-call turns and of reply turns."""

    tool_call: Distribution
    reply: Distribution

    def metrics(self) -> dict[str, float]:
        out = {}
        for kind, d in (("tool_call", self.tool_call), ("reply", self.reply)):
            for stat in ("mean", "p50", "p95"):
                value = d.stat(stat)
                out[f"{kind}_{stat}"] = float(value) if value is not None else 0.0
        return out

    def to_dict(self) -> dict:
        return {"tool_call": self.tool_call.to_dict(), "reply": self.reply.to_dict()}


def turn_tokens(messages: Iterable[dict]) -> tuple[list[int], list[int]]:
    """Reasoning tokens of each tool-call message and of each reply message."""
    calls, replies = [], []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        tokens = count_tokens(m.get("reasoning_content"))
        (calls if m.get("tool_calls") else replies).append(tokens)
    return calls, replies


def cot_lengths(trajectories: Iterable[Sequence[dict]]) -> CotLengths:
    """The distributions over several trajectories (lists of OpenAI-style messages)."""
    calls, replies = [], []
    for messages in trajectories:
        c, r = turn_tokens(messages)
        calls += c
        replies += r
    return CotLengths(distribution(calls), distribution(replies))


def _model_messages(outcome: CaseOutcome) -> list[dict]:
    handoff = outcome.episode.handed_off
    msgs = list(outcome.episode.messages)
    return msgs[:-1] if handoff and msgs and msgs[-1]["role"] == "assistant" else msgs


@dataclass(frozen=True)
class CotLengthSuite:
    """Reasoning lengths on the T1 episodes (played here unless `outcomes` are given)."""

    name: str = "cot_length"

    def run(self, model: Policy | InferenceBackend, harness: Harness | None, *,
            episodes: int = 30, variants: int = 0, seed: int = 0, max_steps: int = MAX_STEPS,
            max_tokens: int = 512, progress: Progress | None = None,
            bad_cases: BadCaseSink | None = None, limit: int | None = None,
            outcomes: Sequence[CaseOutcome] | None = None) -> SuiteResult:
        """Bad cases are T1's (reported there), so `bad_cases` is not used."""
        h = need_harness(self.name, harness)
        episodes = cap(episodes, limit)
        played = list(outcomes) if outcomes is not None else T1Suite().play(
            model, h, episodes=episodes, seed=seed, max_steps=max_steps,
            max_tokens=max_tokens, progress=_as(progress, self.name))
        stats = cot_lengths(_model_messages(o) for o in played)
        rows = tuple({"case_id": f"{self.name}/{o.scenario.id}", "scenario_id": o.scenario.id,
                      "tool_call_tokens": c, "reply_tokens": r}
                     for o in played for c, r in [turn_tokens(_model_messages(o))])
        return SuiteResult(self.name, stats.metrics(),
                           stats.to_dict() | {"episodes": len(played), "tokens": "count_tokens"},
                           rows)


def _as(progress: Progress | None, suite: str) -> Progress | None:
    return None if progress is None else (lambda _s, d, t: progress(suite, d, t))
