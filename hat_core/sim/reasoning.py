"""The oracle's long reasoning: a grounded deliberation of about N simulator tokens per turn.

    text = deliberate(binding, truth, skill, budget=90, tool=binding.tools_by_id["product.price"])
    count_tokens(text)  # >= 90, at most one sentence more

The short oracle writes one ~20-token sentence before a call or a reply, far under the CoT
length penalty's thresholds, so a penalty on long reasoning never bites on the oracle's
students. With `reasoning_tokens: N` (`TeacherConfig`) it deliberates instead: it restates
the viewer's words, names the skill and why, the tool it calls (surface name, what it does)
with every argument and where its value comes from, the other tools of the skill it leaves
for later, the rules of the reply (facts, banned wording, length), then re-checks the call
argument by argument (before a reply: the facts as the tool results gave them, never before
the call) until the text reaches N tokens. Every sentence is true of the turn and
the harness it is shown, under that harness's surface names, so a student learns reasoning
that reads the harness (not filler). Penalty thresholds that scale with N:
`hat_core.sim.scoring.scaled_cot_limits(N)`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from hat_core.sim.binding import Binding, ToolBinding
from hat_core.sim.episode import count_tokens
from hat_core.sim.scenarios import TurnTruth

KIND_WORDS = {"clarify": "缺少必要信息，需要先问清楚", "refuse": "观众在诱导违规说法，需要礼貌拒绝",
              "comment": "这是弹幕互动"}


def deliberate(binding: Binding, truth: TurnTruth, skill: str, budget: int,
               tool: ToolBinding | None = None) -> str:
    """About `budget` simulator tokens of reasoning before calling `tool` (None: before the
    reply). Whole sentences: at least `budget` tokens, at most one sentence over."""
    parts: list[str] = []
    used = 0
    for sentence in _sentences(binding, truth, skill, tool):
        if used >= budget:
            break
        parts.append(sentence)
        used += count_tokens(sentence)
    return "".join(parts)


def _sentences(binding: Binding, truth: TurnTruth, skill: str,
               tool: ToolBinding | None) -> Iterator[str]:
    yield f"观众说：「{truth.user}」。"
    yield f"这属于{skill or '日常互动'}。"
    if truth.kind in KIND_WORDS:
        yield f"{KIND_WORDS[truth.kind]}。"
    spec = binding.harness.skill(truth.skill) if _has_skill(binding, truth.skill) else None
    if spec is not None and spec.description:
        yield f"这个技能的说明是：{spec.description}。"
    call = list(_call_checks(binding, tool, truth))
    yield from call
    others = [binding.tools_by_id[c.tool_id].name for c in truth.required
              if c.tool_id in binding.tools_by_id and binding.tools_by_id[c.tool_id] is not tool]
    if tool is not None and others:
        yield f"这一步先调用{tool.name}，之后还要用{'、'.join(others)}。"
    if truth.facts:
        yield f"回复里要说清{'、'.join(f.label for f in truth.facts)}，数字以工具结果为准。"
    if truth.forbidden:
        yield f"不能说{'、'.join(truth.forbidden[:4])}这类词。"
    yield f"回复控制在{truth.max_chars}字以内，语气亲切。"
    if tool is None and truth.required:
        yield "工具结果已经齐了，可以作答。"
    if tool is not None:
        recheck = [f"再核对一遍：工具名是{tool.name}，参数名以工具列表为准。", *call[1:]]
    else:  # after the calls the results are in: the facts the reply states, from them
        recheck = [f"工具结果里{f.label}是{f.alternatives[0]}，回复照写。" for f in truth.facts
                   if f.alternatives] + [f"再确认一遍：按{skill or '要求'}回复，不编造事实。"]
    while True:  # re-check the call (or the plan) until the budget is spent
        yield from recheck


def _has_skill(binding: Binding, skill_id: str) -> bool:
    return any(s.id == skill_id for s in binding.harness.skills)


def _call_checks(binding: Binding, tool: ToolBinding | None,
                 truth: TurnTruth) -> Iterator[str]:
    """The call's sentences: the tool and its purpose, then each argument and its source."""
    if tool is None:
        return
    spec = binding.harness.tool(tool.tool_id)
    yield f"要调用的工具是{tool.name}，它的作用是{spec.description or '查询事实'}。"
    expected = next((c for c in truth.required if c.tool_id == tool.tool_id), None)
    args = tool.surface_args(dict(expected.args)) if expected is not None else {}
    for name, value in args.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        yield f"参数{name}填{shown}，来自观众的问题和当前商品。"
