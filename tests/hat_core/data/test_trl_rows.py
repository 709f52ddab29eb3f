"""TRL rows: JSON-string tools and arguments, reasoning kept, rendered by TRL's Qwen3 template."""

from __future__ import annotations

import json
from pathlib import Path

import trl
from datasets import load_from_disk
from transformers.utils.chat_template_utils import render_jinja_template

from hat_core.data.trl_rows import META, trajectory_from_row, trl_row

QWEN3 = (Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja").read_text()


def _train(built):
    return load_from_disk(str(built.out / "dataset"))["train"]


def test_rows_have_the_trl_shape_and_metadata(built):
    ds = _train(built)
    assert {"messages", "tools", "scenario", *META} <= set(ds.column_names)
    row = next(r for r in ds if any(m["tool_calls"] for m in r["messages"]))
    assert isinstance(row["tools"], str)
    tools = json.loads(row["tools"])
    assert all(t["type"] == "function" for t in tools)
    calls = [c for m in row["messages"] for c in m["tool_calls"] or ()]
    assert all(isinstance(json.loads(c["function"]["arguments"]), dict) for c in calls)
    assert any(m["reasoning_content"] for m in row["messages"] if m["role"] == "assistant")
    assert set(ds.unique("split")) == {"train"}


def test_rows_render_through_trls_qwen3_template(built):
    ds = _train(built)
    for row in ds.select(range(20)):
        text = render_jinja_template([row["messages"]], tools=json.loads(row["tools"]),
                                     chat_template=QWEN3)[0][0]
        assert text.count("<|im_start|>assistant") == sum(
            m["role"] == "assistant" for m in row["messages"])
        for m in row["messages"]:
            for c in m["tool_calls"] or ():
                assert f'"arguments": {c["function"]["arguments"]}' in text


def test_a_row_reads_back_into_the_same_trajectory(built):
    row = _train(built)[0]
    t = trajectory_from_row(row)
    again = trl_row(t, row["tools"])
    assert again["messages"] == row["messages"]
    assert {k: again[k] for k in META} == {k: row[k] for k in META}
