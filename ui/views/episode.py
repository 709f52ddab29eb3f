"""A bad case's trajectory, readable: messages, tool calls and results, hook firings and the
judge's scores. `episode_blocks` (pure) turns the stored episode (`Episode.to_dict()` of the
simulator, see docs/simulator.md, or a bare `{"turns": [...]}`) into blocks; `show_episode`
draws them with Streamlit."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import streamlit as st


@dataclass(frozen=True)
class Block:
    """One thing to draw: kind in system/prompt/user/assistant/tool_call/tool/hook."""

    kind: str
    title: str
    body: str
    data: Any = None
    failed: bool = False


def episode_blocks(episode: dict) -> list[Block]:
    """The trajectory as blocks in order; hook firings follow as `hook` blocks."""
    messages = episode.get("messages") or episode.get("turns") or []
    names: dict[str, str] = {}
    blocks: list[Block] = []
    for i, m in enumerate(messages):
        blocks += _blocks_of(m, names, first=i == 0)
    for f in episode.get("hook_firings") or []:
        blocks.append(Block("hook", f"hook {f.get('hook_id')} fired ({f.get('event')} → "
                                    f"{f.get('action')}), turn {f.get('turn')}, attempt "
                                    f"{f.get('attempt')}", str(f.get("message", ""))))
    return blocks


def _blocks_of(m: dict, names: dict[str, str], *, first: bool) -> list[Block]:
    role, content = m.get("role", "?"), m.get("content") or ""
    if role == "system":
        return [Block("prompt" if first else "system",
                      "System prompt" if first else "Hook message (retry)", str(content))]
    if role == "tool":
        name = names.get(m.get("tool_call_id", ""), m.get("name", "tool"))
        data = _json(content)
        failed = isinstance(data, dict) and "error" in data
        return [Block("tool", f"Result of {name}" + (" (failed)" if failed else ""),
                      "", data, failed)]
    out = []
    if role == "assistant" and m.get("reasoning_content"):
        out.append(Block("assistant", "Reasoning", str(m["reasoning_content"])))
    if content or role != "assistant":
        out.append(Block(role, role.capitalize(), str(content)))
    for call in m.get("tool_calls") or []:
        fn = call.get("function", call)
        names[call.get("id", "")] = fn.get("name", "?")
        out.append(Block("tool_call", f"Calls {fn.get('name')}", "", _json(fn.get("arguments"))))
    return out


def score_rows(judge_scores: dict) -> list[dict]:
    """The judge's numeric scores as rows (reward, score)."""
    return [{"reward": k, "score": v} for k, v in judge_scores.items()
            if isinstance(v, int | float) and not isinstance(v, bool)]


def show_episode(episode: dict, judge_scores: dict) -> None:
    """Draw the trajectory, then the judge's verdict and scores."""
    for block in episode_blocks(episode):
        _draw(block)
    st.markdown("**Judge**")
    if judge_scores.get("reason"):
        st.caption(f"verdict {judge_scores.get('verdict')}: {judge_scores['reason']}")
    st.dataframe(score_rows(judge_scores), hide_index=True)


def _draw(block: Block) -> None:
    if block.kind == "prompt":
        with st.expander(block.title):
            st.code(block.body, language=None, wrap_lines=True)
    elif block.kind in ("user", "assistant"):
        with st.chat_message(block.kind):
            st.markdown(f"*{block.title}*" if block.title == "Reasoning" else "")
            st.text(block.body)
    elif block.kind == "tool_call":
        with st.chat_message("assistant", avatar=":material/build:"):
            st.markdown(f"**{block.title}**")
            st.json(block.data, expanded=True)
    elif block.kind == "tool":
        with st.chat_message("tool", avatar=":material/output:"):
            (st.error if block.failed else st.markdown)(block.title)
            st.json(block.data, expanded=1)
    else:
        st.warning(f"{block.title}: {block.body}", icon=":material/gpp_maybe:")


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
