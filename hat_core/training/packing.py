"""Packed SFT rows: several episodes of one harness surface as one conversation, fixed length.

A data build gives one row per episode, each with the whole system prompt (the harness: up to
~1k tokens) before a short assistant turn, so a few percent of the tokens a step processes
carry loss. Packing puts the episodes that share one surface (the same system prompt and
tool list) into one multi-turn conversation under one system prompt, as a live room answers
viewer after viewer, until the token budget is full. Every row is then padded to exactly
`max_length` tokens so a compiled model sees one shape and never recompiles.

Tokenisation is TRL's: the tokenizer's chat template swapped for TRL's training template
(`trl.chat_template_utils.get_training_chat_template`, with `{% generation %}` markers), and
`return_assistant_tokens_mask`, so the labels are exactly those `SFTTrainer` would train on
(assistant tokens only).

    packed = pack_episodes(rows, tokenizer, max_length=2048)   # list of {"messages", "tools"}
    batch = encode_fixed(packed, tokenizer, max_length=2048)    # input_ids / labels, [N, L]
    rows = encode_rows(packed, tokenizer, max_length=2048)      # the same, unpadded
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

IGNORE = -100


@dataclass(frozen=True)
class Encoded:
    """Fixed-length token rows: ids padded with the pad token, labels -100 off the assistant
    tokens and on the padding."""

    input_ids: list[list[int]]
    labels: list[list[int]]

    @property
    def assistant_tokens(self) -> int:
        return sum(1 for row in self.labels for t in row if t != IGNORE)


def surface_key(row: dict) -> tuple[str, str]:
    """What one harness surface shows the model: its tool list and its system prompt."""
    messages = row["messages"]
    system = messages[0].get("content") or "" if messages[0]["role"] == "system" else ""
    tools = row.get("tools")
    return (tools if isinstance(tools, str) else json.dumps(tools or []), system)


def training_template(tokenizer) -> str:
    """The chat template with TRL's generation markers (the tokenizer's own if it has them)."""
    from trl.chat_template_utils import get_training_chat_template

    return get_training_chat_template(tokenizer) or tokenizer.chat_template


def encode(row: dict, tokenizer, template: str) -> tuple[list[int], list[int]]:
    """`(input_ids, assistant_mask)` of one conversation row, as `SFTTrainer` tokenises it."""
    tools = row.get("tools")
    out = tokenizer.apply_chat_template(
        row["messages"], tools=json.loads(tools) if isinstance(tools, str) else tools,
        chat_template=template, tokenize=True, return_dict=True,
        return_assistant_tokens_mask=True)
    return list(out["input_ids"]), list(out["assistant_masks"])


def pack_episodes(rows: Sequence[dict], tokenizer, *, max_length: int,
                  max_episodes: int = 64) -> list[dict]:
    """Rows of one surface joined into conversations of at most `max_length` tokens (and
    `max_episodes` episodes), in input order within a surface; a row longer than the budget
    on its own stays a row of its own (truncated later)."""
    template = training_template(tokenizer)
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        groups.setdefault(surface_key(row), []).append(row)
    return [packed for members in groups.values()
            for packed in _pack_group(members, tokenizer, template, max_length, max_episodes)]


def _pack_group(members: list[dict], tokenizer, template: str, max_length: int,
                max_episodes: int) -> list[dict]:
    head = members[0]["messages"][:1] if members[0]["messages"][0]["role"] == "system" else []
    prefix = len(encode({"messages": head, "tools": members[0].get("tools")},
                        tokenizer, template)[0]) if head else 0
    out, current, used = [], [], prefix
    for row in members:
        cost = len(encode(row, tokenizer, template)[0]) - prefix
        if current and (used + cost > max_length or len(current) >= max_episodes):
            out.append(_join(head, current, members[0].get("tools")))
            current, used = [], prefix
        current.append(row)
        used += cost
    if current:
        out.append(_join(head, current, members[0].get("tools")))
    return out


def _join(head: list[dict], episodes: list[dict], tools) -> dict:
    messages = list(head)
    for row in episodes:
        messages.extend(row["messages"][len(head):])
    return {"messages": messages, "tools": tools, "episodes": len(episodes)}


def encode_rows(rows: Sequence[dict], tokenizer, *, max_length: int) -> Encoded:
    """Every row tokenised and truncated to `max_length`, not padded (a collator pads);
    rows left with no assistant token are dropped."""
    template = training_template(tokenizer)
    ids_out, labels_out = [], []
    for row in rows:
        ids, mask = encode(row, tokenizer, template)
        ids, mask = ids[:max_length], mask[:max_length]
        if any(mask):
            ids_out.append(ids)
            labels_out.append([t if m else IGNORE for t, m in zip(ids, mask, strict=True)])
    return Encoded(ids_out, labels_out)


def encode_fixed(rows: Sequence[dict], tokenizer, *, max_length: int) -> Encoded:
    """`encode_rows`, then padded to exactly `max_length` (the pad token, label -100)."""
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    rows_out = encode_rows(rows, tokenizer, max_length=max_length)
    fill = [max_length - len(ids) for ids in rows_out.input_ids]
    return Encoded([ids + [pad] * n for ids, n in zip(rows_out.input_ids, fill, strict=True)],
                   [lab + [IGNORE] * n for lab, n in zip(rows_out.labels, fill, strict=True)])
