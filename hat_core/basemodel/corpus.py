"""The base-model corpus: a seeded mix of tool-use, chit-chat and instruction samples, and its
encoding into packed training rows with loss on assistant tokens only.

`generate_corpus(seed, n)` is pure and deterministic; `encode_corpus(samples, tokenizer, seq_len)`
packs whole samples into rows of `seq_len` tokens (longer samples are dropped, the rest padded).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import torch

from hat_core.basemodel.instruction_corpus import instruction_sample
from hat_core.basemodel.sample import Sample, render_text
from hat_core.basemodel.tool_corpus import ToolMix, chat_sample, tool_sample

MIX = (("tool", 0.6), ("chat", 0.05), ("instruction", 0.35))
ASSISTANT_SPAN = re.compile(r"<\|im_start\|>assistant\n(.*?<\|im_end\|>)", re.DOTALL)
IGNORE = -100


def generate_corpus(seed: int, n: int, mix: ToolMix | None = None) -> list[Sample]:
    """`n` samples drawn from `MIX` (tool samples under `mix`); the same seed gives the same
    corpus."""
    rng = random.Random(f"hat-base-corpus-{seed}")
    makers = {"tool": lambda r: tool_sample(r, mix=mix), "chat": lambda r: chat_sample(r, mix),
              "instruction": instruction_sample}
    kinds, weights = zip(*MIX, strict=True)
    return [makers[rng.choices(kinds, weights)[0]](rng) for _ in range(n)]


def render_sample(sample: Sample, profile: str = "full") -> str:
    return render_text(sample.messages, sample.tools, profile=profile)


def assistant_mask(text: str, offsets: list[tuple[int, int]]) -> list[bool]:
    """For each token (by character offsets), whether it lies in an assistant reply."""
    spans = [m.span(1) for m in ASSISTANT_SPAN.finditer(text)]
    mask, i = [], 0
    for start, _ in offsets:
        while i < len(spans) and start >= spans[i][1]:
            i += 1
        mask.append(i < len(spans) and start >= spans[i][0])
    return mask


@dataclass(frozen=True)
class EncodedCorpus:
    """Packed rows: `input_ids` and `labels` (`IGNORE` outside assistant replies), both
    `[rows, seq_len]`, with counts for the manifest."""

    input_ids: torch.Tensor
    labels: torch.Tensor
    samples: int
    dropped: int
    tokens: int
    target_tokens: int


def _encode(texts: list[str], tokenizer) -> list[tuple[list[int], list[int]]]:
    enc = tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
    docs = []
    for text, ids, offsets in zip(texts, enc["input_ids"], enc["offset_mapping"], strict=True):
        mask = assistant_mask(text, offsets)
        docs.append((ids, [t if m else IGNORE for t, m in zip(ids, mask, strict=True)]))
    return docs


def encode_corpus(samples: list[Sample], tokenizer, seq_len: int,
                  profile: str = "full") -> EncodedCorpus:
    """Tokenize, mask and pack `samples` in order into rows of exactly `seq_len` tokens."""
    docs = _encode([render_sample(s, profile) for s in samples], tokenizer)
    rows: list[tuple[list[int], list[int]]] = []
    ids: list[int] = []
    labels: list[int] = []
    dropped = 0
    for doc_ids, doc_labels in docs:
        if len(doc_ids) > seq_len:
            dropped += 1
            continue
        if len(ids) + len(doc_ids) > seq_len:
            rows.append((ids, labels))
            ids, labels = [], []
        ids, labels = ids + doc_ids, labels + doc_labels
    if ids:
        rows.append((ids, labels))
    pad = tokenizer.pad_token_id
    input_ids = torch.tensor([r + [pad] * (seq_len - len(r)) for r, _ in rows])
    label_t = torch.tensor([lab + [IGNORE] * (seq_len - len(lab)) for _, lab in rows])
    return EncodedCorpus(input_ids, label_t, len(docs) - dropped, dropped,
                         int((input_ids != pad).sum()), int((label_t != IGNORE).sum()))
