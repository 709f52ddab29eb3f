"""TRL's SFTTrainer accepts the built base model and tokenizer (what HSA-SFT will do)."""

from __future__ import annotations

import json
import random

import pytest

from hat_core.basemodel.tool_corpus import tool_sample


def _row(sample) -> dict:
    messages = []
    for m in sample.messages:
        m = dict(m)
        if m.get("tool_calls"):
            m["tool_calls"] = [{"type": "function", "function": {
                "name": c["function"]["name"],
                "arguments": json.dumps(c["function"]["arguments"], ensure_ascii=False)}}
                for c in m["tool_calls"]]
        messages.append(m)
    return {"messages": messages, "tools": json.dumps(sample.tools, ensure_ascii=False)}


@pytest.mark.slow
def test_sft_trainer_assistant_only_loss_two_steps(test_build, tmp_path):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from hat_core.basemodel import load_base

    model, tokenizer = load_base(test_build.path)
    rng = random.Random(0)
    rows = [_row(tool_sample(rng)) for _ in range(4)]
    config = SFTConfig(output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=2,
                       assistant_only_loss=True, bf16=False, report_to="none",
                       logging_steps=1, save_strategy="no",
                       max_length=1024)
    trainer = SFTTrainer(model=model, args=config, train_dataset=Dataset.from_list(rows),
                         processing_class=tokenizer)
    result = trainer.train()
    assert result.global_step == 2
    row = trainer.train_dataset[0]
    mask = row.get("assistant_masks") or [int(x != -100) for x in row["labels"]]
    assert 0 < sum(mask) < len(mask)
