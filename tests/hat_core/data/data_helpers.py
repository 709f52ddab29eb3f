"""Helpers for the data tests: a tiny config and a fake LLM teacher.

`ScriptedLLMTeacher` subclasses the real `OpenAITeacher` and replaces only its network call
(`_chat`): it answers from a script recorded from oracle episodes, keyed by the viewer
messages so far and the position in the turn, and can damage the final reply of chosen
scenarios (drop the fact, drop the call to action, say it cannot answer).
"""

from __future__ import annotations

from pathlib import Path

from hat_core.data.config import DataConfig, load_data_config
from hat_core.data.teacher import OpenAITeacher, TeacherError
from hat_core.harness.io import load_harness
from hat_core.inference.protocol import AssistantOutput, ToolCall
from hat_core.sim.policy import OraclePolicy
from hat_core.sim.runner import run_episode

ROOT = Path(__file__).resolve().parents[3]
V1 = ROOT / "examples" / "harnesses" / "v1.yaml"
TINY = {"scenarios": 30, "variants": 2, "splits.heldout_variants": 1, "opd.size": 20,
        "splits.heldout_scenarios": 0.1, "splits.heldout_products": 0.1}


def tiny_config(**overrides) -> DataConfig:
    return load_data_config(None, {**TINY, **overrides})


def v1():
    return load_harness(V1)


DAMAGE = {
    "no_fact": lambda text: "好的，感谢关注，喜欢就拍～",
    "no_cta": lambda text: text.replace("拍", "看").replace("下单", "看看").replace(
        "抢", "看").replace("关注", "留意").replace("链接", "介绍").replace(
        "加购", "看").replace("购物车", "页面"),
    "cannot": lambda text: "这个我不清楚呢",
}


def script_key(messages: list[dict]) -> tuple:
    users = tuple(m["content"] for m in messages if m["role"] == "user")
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    step = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
    return users, step


def record_script(harness, scenarios, catalog, damage: dict[str, str]) -> dict:
    """`{(viewer messages, step): AssistantOutput}` from oracle episodes; `damage` maps a
    scenario id to a key of `DAMAGE` applied to its final replies."""
    script = {}
    for sc in scenarios:
        ep = run_episode(harness, sc, catalog, OraclePolicy())
        msgs = list(ep.messages)
        for i, m in enumerate(msgs):
            if m["role"] != "assistant":
                continue
            calls = tuple(ToolCall(c["function"]["name"], c["function"]["arguments"])
                          for c in m.get("tool_calls") or ())
            content = m.get("content") or ""
            if not calls and sc.id in damage:
                content = DAMAGE[damage[sc.id]](content)
            script[script_key(msgs[:i])] = AssistantOutput(content, m.get("reasoning_content", ""),
                                                     calls)
    return script


class ScriptedLLMTeacher(OpenAITeacher):
    """A fake OpenAI-compatible teacher: `fail_first` requests raise before it answers."""

    def __init__(self, script: dict, *, fail_first: int = 0, **kwargs):
        super().__init__("http://127.0.0.1:9", "fake", backoff_s=0.0, **kwargs)
        self.script, self.fail_first, self.requests = script, fail_first, 0

    def _chat(self, messages: list[dict], tools: list[dict]):
        self.requests += 1
        if self.requests <= self.fail_first:
            raise TeacherError("connection refused (fake)")
        return self.script.get(script_key(messages), AssistantOutput("这个我不清楚呢"))
