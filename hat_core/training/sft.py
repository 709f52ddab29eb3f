"""HSA-SFT: supervised fine-tuning on teacher trajectories with TRL's `SFTTrainer`.

    result = run_sft(load_stage_config("sft", Path("examples/configs/sft_tiny.yaml")))

Rows are `{"messages", "tools"}` (see `rows.py`); the loss covers assistant tokens only
(`assistant_only_loss`, which needs TRL's qwen3 chat template); full fine-tune or LoRA (merged
into the weights when saved).

With `pack: true` the episodes of one harness surface are joined under one system prompt up
to `max_length` tokens (`hat_core.training.packing`), tokenised exactly as `SFTTrainer` would
(TRL's training template, assistant masks) and padded to `max_length`, so each step has one
shape and the system prompt is paid once per row instead of once per episode. Those rows
train through `transformers.Trainer` (the base of `SFTTrainer`: the same arguments,
callbacks, checkpoints, resume and MLflow logging): `SFTTrainer` computes log-probs,
entropy and top-1 through a chunked LM head for its metrics, which halved the tokens/s on CPU
(benchmarks/train_throughput.py, docs/training.md). The loss is the causal-LM loss on the
assistant tokens with logits computed only there (`assistant_logits_trainer`); under
`torch_compile` the model's own loss over all logits (a mask of varying size would recompile).
"""

from __future__ import annotations

import functools

from hat_core.errors import ConfigError, Problem
from hat_core.training.config import SftStageConfig
from hat_core.training.packing import IGNORE, encode_fixed, pack_episodes
from hat_core.training.rows import file_digest, load_sft_rows
from hat_core.training.stage import (
    Progress,
    StageResult,
    load_model,
    peft_config,
    profiled,
    run_stage,
    setup,
    tracking_for,
    training_kwargs,
)


def sft_args(config: SftStageConfig, defaults):
    """The `SFTConfig` of a stage config (packed rows come tokenised, with their labels)."""
    from trl import SFTConfig

    return SFTConfig(**training_kwargs(config, defaults), max_length=config.max_length,
                     assistant_only_loss=config.assistant_only_loss and not config.pack)


def sft_dataset(config: SftStageConfig, tokenizer):
    """The training rows: conversations, or (`pack`) packed fixed-length token rows."""
    from datasets import Dataset

    rows = load_sft_rows(config.dataset)
    if not config.pack:
        return Dataset.from_list(rows)
    packed = pack_episodes(rows, tokenizer, max_length=config.max_length,
                           max_episodes=config.max_episodes_per_row)
    encoded = encode_fixed(packed, tokenizer, max_length=config.max_length)
    return Dataset.from_dict({"input_ids": encoded.input_ids,
                              "labels": encoded.labels}).with_format("torch")


@functools.cache
def assistant_logits_trainer():
    """`transformers.Trainer` whose loss projects onto the vocabulary only the positions that
    carry loss: the model's `logits_to_keep` as a boolean mask over (row, position) (the
    packed-training form of transformers' `slice_logits_to_keep`), then the cross-entropy of
    those logits, summed over the batch's labelled tokens and divided by their count
    (`num_items_in_batch` under gradient accumulation, as the model's own loss does). The
    same loss as the full logits give, without the LM head and the float softmax over the
    ~75% of a packed row that is system prompt, tool results and padding."""
    import torch
    import torch.nn.functional as F
    from transformers import Trainer

    class AssistantLogitsTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            inputs = dict(inputs)
            labels = inputs.pop("labels")
            targets = labels[:, 1:]
            wanted = targets != IGNORE
            keep = torch.zeros_like(labels, dtype=torch.bool)
            keep[:, :-1] = wanted
            outputs = model(**inputs, logits_to_keep=keep, use_cache=False)
            loss = F.cross_entropy(outputs.logits.float().reshape(-1, outputs.logits.shape[-1]),
                                   targets[wanted], reduction="sum")
            count = num_items_in_batch if num_items_in_batch is not None else wanted.sum()
            loss = loss / count
            return (loss, outputs) if return_outputs else loss

    return AssistantLogitsTrainer


def build_sft_trainer(config: SftStageConfig, defaults):
    """`(trainer, tokenizer)` ready to train."""
    model, tokenizer = load_model(config.base, defaults, config)
    dataset = sft_dataset(config, tokenizer)
    if config.pack:
        from transformers import Trainer, default_data_collator

        if config.lora.enabled:
            from peft import get_peft_model

            model = get_peft_model(model, peft_config(config))
        cls = Trainer if config.torch_compile else assistant_logits_trainer()
        trainer = cls(model=model, args=sft_args(config, defaults), train_dataset=dataset,
                      data_collator=default_data_collator, processing_class=tokenizer)
    else:
        from trl import SFTTrainer

        trainer = SFTTrainer(model=model, args=sft_args(config, defaults), train_dataset=dataset,
                             processing_class=tokenizer, peft_config=peft_config(config))
    if len(trainer.train_dataset) == 0:
        raise ConfigError("no SFT row keeps an assistant token within max_length", [
            Problem("max_length", f"{config.max_length}: every one of the {len(dataset)} rows "
                                  "was truncated before its first assistant token; raise it")])
    return trainer, tokenizer


@profiled
def run_sft(config: SftStageConfig, *, tracking=None, progress: Progress | None = None,
            resume: bool = False) -> StageResult:
    """Run HSA-SFT: `config.base` -> `config.output_dir`."""
    defaults = setup(config)
    trainer, tokenizer = build_sft_trainer(config, defaults)
    return run_stage("sft", trainer, tokenizer, config, resume=resume,
                     tracking=tracking_for(config, "sft", tracking),
                     dataset_hashes={"sft": file_digest(config.dataset)}, progress=progress)
