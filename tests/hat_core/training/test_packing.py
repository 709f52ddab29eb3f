"""Packed SFT rows: episodes of one surface under one system prompt, labels on assistant tokens
only, every row exactly `max_length` tokens."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hat_core.harness.io import load_harness
from hat_core.hsa import HsaConfig, augment
from hat_core.training.packing import (
    IGNORE,
    encode,
    encode_fixed,
    pack_episodes,
    surface_key,
    training_template,
)
from hat_core.training.rows import oracle_rows, sft_row

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "examples" / "configs" / "rl_mini_harness.yaml"
MAX_LENGTH = 1536


@pytest.fixture(scope="module")
def tokenizer(base_model):
    from hat_core.basemodel import load_tokenizer

    return load_tokenizer(base_model)


@pytest.fixture(scope="module")
def two_surfaces() -> list[dict]:
    """12 oracle episodes on the mini harness and 12 on one renamed variant, interleaved."""
    from hat_core.sim.batch import world
    from hat_core.sim.binding import bind
    from hat_core.sim.policy import OraclePolicy
    from hat_core.sim.runner import run_episode

    original = oracle_rows(MINI, 12, seed=0)
    mini = load_harness(MINI)
    variant = next(v for v in (augment(mini, random.Random(s), HsaConfig()).harness
                               for s in range(50)) if v.tools[0].name != mini.tools[0].name)
    catalog, scenarios = world(0, 12)
    tools = bind(variant).rendered.tools
    renamed = [sft_row(list(run_episode(variant, s, catalog, OraclePolicy()).messages), tools)
               for s in scenarios]
    return [row for pair in zip(original, renamed, strict=True) for row in pair]


def test_each_packed_row_holds_episodes_of_one_surface(tokenizer, two_surfaces):
    packed = pack_episodes(two_surfaces, tokenizer, max_length=MAX_LENGTH)
    keys = {surface_key(r) for r in two_surfaces}
    assert len(keys) == 2 and len(packed) < len(two_surfaces)
    for row in packed:
        assert surface_key(row) in keys
        assert [m["role"] for m in row["messages"]].count("system") == 1
    assert sum(r["episodes"] for r in packed) == len(two_surfaces)
    assert max(r["episodes"] for r in packed) > 1


def test_packing_keeps_every_assistant_token_and_only_those(tokenizer, two_surfaces):
    template = training_template(tokenizer)
    alone = sum(sum(encode(r, tokenizer, template)[1]) for r in two_surfaces)
    packed = pack_episodes(two_surfaces, tokenizer, max_length=MAX_LENGTH)
    big = MAX_LENGTH * 8  # no truncation here: count what packing itself keeps
    joined = encode_fixed(packed, tokenizer, max_length=big)
    assert joined.assistant_tokens == alone
    for row in packed:
        ids, mask = encode(row, tokenizer, template)
        labelled = [t for t, m in zip(ids, mask, strict=True) if m]
        text = tokenizer.decode(labelled)
        for message in row["messages"]:
            if message["role"] == "user":
                assert message["content"] not in text  # viewer turns carry no loss


def test_rows_fit_the_budget_and_are_padded_to_it(tokenizer, two_surfaces):
    template = training_template(tokenizer)
    packed = pack_episodes(two_surfaces, tokenizer, max_length=MAX_LENGTH)
    for row in packed:
        if row["episodes"] > 1:
            assert len(encode(row, tokenizer, template)[0]) <= MAX_LENGTH
    fixed = encode_fixed(packed, tokenizer, max_length=MAX_LENGTH)
    assert {len(r) for r in fixed.input_ids} == {MAX_LENGTH}
    pad = tokenizer.pad_token_id
    for ids, labels in zip(fixed.input_ids, fixed.labels, strict=True):
        for token, label in zip(ids, labels, strict=True):
            assert label in (IGNORE, token)
        tail = len(ids) - next(i for i, t in enumerate(reversed(ids)) if t != pad)
        assert all(label == IGNORE for label in labels[tail:])


def test_a_row_with_no_assistant_token_left_is_dropped(tokenizer, two_surfaces):
    short = encode_fixed(two_surfaces[:4], tokenizer, max_length=16)
    assert short.input_ids == []


def test_the_assistant_logits_loss_and_gradients_equal_the_full_logits_ones(sft_overrides):
    """Projecting only the labelled positions is an optimisation, not another loss."""
    import torch

    from hat_core.training import load_stage_config
    from hat_core.training.sft import assistant_logits_trainer, build_sft_trainer
    from hat_core.training.stage import setup

    config = load_stage_config("sft", None, sft_overrides | {"pack": True,
                                                             "max_length": MAX_LENGTH})
    trainer, _ = build_sft_trainer(config, setup(config))
    assert isinstance(trainer, assistant_logits_trainer())
    batch = next(iter(trainer.get_train_dataloader()))
    model = trainer.model
    mine = trainer.compute_loss(model, batch)
    mine.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    theirs = model(input_ids=batch["input_ids"], labels=batch["labels"]).loss
    theirs.backward()
    assert mine.item() == pytest.approx(theirs.item(), rel=1e-5)
    for g, p in zip(grads, model.parameters(), strict=True):
        assert torch.allclose(g, p.grad, rtol=1e-4, atol=1e-7)
    items = (batch["labels"] != IGNORE).sum()
    assert trainer.compute_loss(model, batch, num_items_in_batch=2 * items).item() == \
        pytest.approx(theirs.item() / 2, rel=1e-5)

def test_hat_train_sft_packed_feeds_fixed_shape_batches_and_trains(sft_overrides):
    from hat_core.training import load_stage_config
    from hat_core.training.sft import build_sft_trainer, run_sft
    from hat_core.training.stage import setup

    plain = load_stage_config("sft", None, sft_overrides)
    packed = load_stage_config("sft", None, sft_overrides | {"pack": True, "max_length": 1536})
    plain_rows = len(build_sft_trainer(plain, setup(plain))[0].train_dataset)
    trainer, _ = build_sft_trainer(packed, setup(packed))
    assert 0 < len(trainer.train_dataset) < plain_rows
    batch = next(iter(trainer.get_train_dataloader()))
    assert tuple(batch["input_ids"].shape) == (packed.per_device_train_batch_size, 1536)
    assert (batch["labels"] != IGNORE).sum() > 0
    result = run_sft(packed)
    assert result.steps == 2 and result.metrics["train_loss"] > 0


def test_packed_sft_with_lora_saves_merged_weights(sft_overrides):
    from hat_core.training import load_stage_config
    from hat_core.training.sft import run_sft

    config = load_stage_config("sft", None, sft_overrides | {
        "pack": True, "max_length": 1536, "lora.enabled": True, "lora.r": 4})
    result = run_sft(config)
    files = {p.name for p in result.output_dir.iterdir()}
    assert result.steps == 2 and "adapter_config.json" not in files
    assert "model.safetensors" in files


@pytest.mark.slow  # compiling costs about 30 s on 2 cores
def test_packed_sft_compiled_with_bf16_autocast_trains_and_saves_plain_weights(sft_overrides):
    """The fast path of the CPU recipe on CPUs with bf16 in hardware (torch.compile over
    fixed-length rows, bf16 autocast over fp32 master weights), forced on here whatever the
    CPU, so CI runs it everywhere."""
    import torch
    from transformers import AutoModelForCausalLM

    from hat_core.training import load_stage_config
    from hat_core.training.sft import run_sft

    config = load_stage_config("sft", None, sft_overrides | {
        "pack": True, "max_length": 1536, "torch_compile": True, "bf16": True})
    result = run_sft(config)
    assert result.steps == 2 and torch.isfinite(torch.tensor(result.metrics["train_loss"]))
    model = AutoModelForCausalLM.from_pretrained(result.output_dir)
    assert next(model.parameters()).dtype == torch.float32
    assert not any(k.startswith("_orig_mod") for k in model.state_dict())
