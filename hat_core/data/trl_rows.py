"""TRL rows, built at the boundary: `{"messages": [...], "tools": "<JSON>", ...metadata}`.

TRL's `SFTTrainer` reads `messages` and a `tools` column. Tool-call `arguments` and `tools`
stay JSON strings (Arrow merges struct schemas across rows and would fill missing fields with
null); assistant messages keep `reasoning_content`. Every message has the same keys (`role`,
`content`, `reasoning_content`, `tool_calls`, `tool_call_id`), so the Arrow schema is stable.
Metadata columns: scenario_id, kind, skill, product_id, harness_hash, variant_id, pool, split,
source, teacher, accuracy, effectiveness, retries, retry_mode, scenario (JSON; for RL rewards).

    row = trl_row(trajectory)
    trajectory = trajectory_from_row(row)   # and back (validation, re-splitting)
"""

from __future__ import annotations

import json
from typing import Any

from hat_core.data.trajectory import Trajectory

META = ("scenario_id", "kind", "skill", "product_id", "harness_hash", "variant_id", "pool",
        "split", "source", "teacher", "accuracy", "effectiveness", "retries", "retry_mode")


def arrow_schema():
    """The Arrow schema of TRL rows (given explicitly: inferring it costs twice the time)."""
    import pyarrow as pa

    call = pa.struct([("id", pa.string()), ("type", pa.string()),
                      ("function", pa.struct([("name", pa.string()),
                                              ("arguments", pa.string())]))])
    message = pa.struct([("role", pa.string()), ("content", pa.string()),
                         ("reasoning_content", pa.string()), ("tool_calls", pa.list_(call)),
                         ("tool_call_id", pa.string())])
    numbers = {"accuracy": pa.float64(), "effectiveness": pa.float64(), "retries": pa.int64()}
    return pa.schema([("messages", pa.list_(message)), ("tools", pa.string()),
                      *((k, numbers.get(k, pa.string())) for k in META),
                      ("scenario", pa.string())])


def trl_message(msg: dict) -> dict:
    """One message with the fixed key set; tool-call arguments as JSON strings."""
    calls = [{"id": c.get("id") or f"call_{i}", "type": "function",
              "function": {"name": (c.get("function") or {}).get("name", ""),
                           "arguments": _json_text((c.get("function") or {}).get("arguments"))}}
             for i, c in enumerate(msg.get("tool_calls") or ())]
    return {"role": msg["role"], "content": msg.get("content") or "",
            "reasoning_content": msg.get("reasoning_content") or None,
            "tool_calls": calls or None, "tool_call_id": msg.get("tool_call_id")}


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def trl_row(t: Trajectory, tools_json: str | None = None,
            scenario_json: str | None = None) -> dict:
    """The TRL row of a trajectory (`tools_json` and `scenario_json` may be passed in,
    computed once per surface and per scenario)."""
    row = {"messages": [trl_message(m) for m in t.messages],
           "tools": tools_json if tools_json is not None
           else json.dumps(list(t.tools), ensure_ascii=False)}
    row.update({k: getattr(t, k) for k in META})
    if scenario_json is None:
        scenario_json = json.dumps(t.scenario, ensure_ascii=False) if t.scenario else ""
    row["scenario"] = scenario_json
    return row


def clean_message(msg: dict) -> dict:
    """A TRL message back in simulator form (null keys dropped)."""
    return {k: v for k, v in msg.items() if v is not None}


def trajectory_from_row(row: dict) -> Trajectory:
    """Rebuild a `Trajectory` from a TRL row (the inverse of `trl_row`)."""
    meta = {k: row.get(k) for k in META}
    meta["retries"] = int(meta.get("retries") or 0)
    return Trajectory(
        messages=tuple(clean_message(m) for m in row["messages"]),
        tools=tuple(json.loads(row["tools"])),
        scenario=json.loads(row["scenario"]) if row.get("scenario") else None,
        rewards={}, **{k: v for k, v in meta.items() if v is not None or k == "product_id"})
