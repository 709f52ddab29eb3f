"""Pre-training the base model: a plain torch loop over packed rows, causal-LM loss on the
labelled (assistant) tokens, AdamW with warmup and cosine decay.

On CPU `torch.compile` + bf16 autocast is several times faster than eager fp32; if compiling
fails the loop falls back to eager and records it. Data order comes from a seeded generator.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from hat_core.basemodel.corpus import IGNORE, EncodedCorpus
from hat_core.basemodel.sizes import BaseSize

log = logging.getLogger(__name__)
StepCallback = Callable[[int, int, float], None]


@dataclass(frozen=True)
class TrainResult:
    steps: int
    final_loss: float
    loss_curve: list[float]
    compiled: bool
    train_seconds: float


def lr_at(step: int, size: BaseSize) -> float:
    """Linear warmup, then cosine decay to 10% of the peak."""
    if step < size.warmup_steps:
        return size.lr * (step + 1) / size.warmup_steps
    progress = (step - size.warmup_steps) / max(1, size.steps - size.warmup_steps)
    return size.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def _batches(data: EncodedCorpus, size: BaseSize, seed: int):
    gen = torch.Generator().manual_seed(seed)
    rows = data.input_ids.shape[0]
    while True:
        order = torch.randperm(rows, generator=gen)
        for i in range(0, rows - size.batch_size + 1, size.batch_size):
            idx = order[i:i + size.batch_size]
            yield data.input_ids[idx], data.labels[idx]


def causal_lm_loss(forward, ids: torch.Tensor, labels: torch.Tensor,
                   bf16: bool) -> torch.Tensor:
    """Mean next-token cross-entropy on the labelled tokens (bf16 autocast when asked)."""
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits = forward(input_ids=ids).logits
    return F.cross_entropy(logits[:, :-1].float().flatten(0, 1), labels[:, 1:].flatten(),
                           ignore_index=IGNORE)


def pretrain(model: torch.nn.Module, data: EncodedCorpus, size: BaseSize, seed: int,
             on_step: StepCallback | None = None) -> TrainResult:
    """Train `model` in place for `size.steps` steps; returns the loss curve and timings."""
    if data.input_ids.shape[0] < size.batch_size:
        raise ValueError(f"corpus has {data.input_ids.shape[0]} rows, fewer than one batch")
    model.train()
    model.config.use_cache = False
    opt = torch.optim.AdamW(model.parameters(), lr=size.lr, betas=(0.9, 0.98), weight_decay=0.01)
    forward = torch.compile(model) if size.compile else model
    compiled = size.compile
    curve: list[float] = []
    recent: list[float] = []
    start = time.perf_counter()
    for step, (ids, labels) in zip(range(size.steps), _batches(data, size, seed), strict=False):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, size)
        try:
            loss = causal_lm_loss(forward, ids, labels, size.bf16)
        except Exception as exc:  # noqa: BLE001 - any compiler failure: fall back to eager
            if not compiled:
                raise
            log.warning("torch.compile failed (%s); training eager", exc)
            forward, compiled = model, False
            loss = causal_lm_loss(forward, ids, labels, size.bf16)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent = (recent + [loss.item()])[-20:]
        if step % 10 == 0 or step == size.steps - 1:
            curve.append(round(sum(recent) / len(recent), 4))
        if on_step:
            on_step(step + 1, size.steps, recent[-1])
    model.eval()
    model.config.use_cache = True
    return TrainResult(size.steps, round(sum(recent) / len(recent), 4), curve, compiled,
                       round(time.perf_counter() - start, 1))
