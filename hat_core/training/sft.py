"""HSA-SFT: supervised fine-tuning on teacher trajectories with TRL's `SFTTrainer`.

    result = run_sft(load_stage_config("sft", Path("examples/configs/sft_tiny.yaml")))

Rows are `{"messages", "tools"}` (see `rows.py`); the loss covers assistant tokens only
(`assistant_only_loss`, which needs TRL's qwen3 chat template); full fine-tune or LoRA (merged
into the weights when saved).

With `pack: true` the episodes of one harness surface are joined under one system prompt up
to `max_length` tokens (`hat_core.training.packing`), tokenised exactly as `SFTTrainer`
would (TRL's training template, assistant masks), and handed to `SFTTrainer` as token rows
with their labels; its collator pads every batch to `max_length`, so each step has one shape.
The system prompt is then paid once per row instead of once per episode.
"""

from __future__ import annotations

from hat_core.errors import ConfigError, Problem
from hat_core.training.config import SftStageConfig
from hat_core.training.packing import encode_rows, pack_episodes
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

    packed = {"assistant_only_loss": False, "pad_to_multiple_of": config.max_length}
    return SFTConfig(**training_kwargs(config, defaults), max_length=config.max_length,
                     **(packed if config.pack else
                        {"assistant_only_loss": config.assistant_only_loss}))


def sft_dataset(config: SftStageConfig, tokenizer):
    """The training rows: conversations, or (`pack`) packed token rows with labels."""
    from datasets import Dataset

    rows = load_sft_rows(config.dataset)
    if not config.pack:
        return Dataset.from_list(rows)
    packed = pack_episodes(rows, tokenizer, max_length=config.max_length,
                           max_episodes=config.max_episodes_per_row)
    encoded = encode_rows(packed, tokenizer, max_length=config.max_length)
    return Dataset.from_dict({"input_ids": encoded.input_ids, "labels": encoded.labels})


def build_sft_trainer(config: SftStageConfig, defaults):
    """`(trainer, tokenizer)` ready to train."""
    from trl import SFTTrainer

    model, tokenizer = load_model(config.base, defaults, config)
    dataset = sft_dataset(config, tokenizer)
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
