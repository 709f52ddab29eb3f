"""General OPD: on-policy distillation from the pre-SFT base to win back instruction following.

    result = run_opd(load_stage_config("opd", Path("examples/configs/opd_tiny.yaml")))

TRL's `DistillationTrainer` (always on-policy): the student (`config.base`, usually the SFT
output) samples completions of general prompts (`config.prompts`: `builtin` instruction prompts
or a prompt file / dataset dir) and is pulled toward the teacher's distribution on them
(`beta`: 0 forward KL, 0.5 JSD, 1 reverse KL). The teacher is the pre-SFT base (`teacher`),
which must share the student's vocabulary.
"""

from __future__ import annotations

from hat_core.errors import ConfigError, Problem
from hat_core.training.config import OpdStageConfig
from hat_core.training.device import resolve
from hat_core.training.rows import file_digest, load_opd_prompts, rows_digest
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


def opd_args(config: OpdStageConfig, defaults):
    """The `DistillationConfig` of a stage config."""
    from trl import DistillationConfig

    return DistillationConfig(**training_kwargs(config, defaults), beta=config.beta,
                              max_completion_length=config.max_completion_length,
                              temperature=config.temperature,
                              use_vllm=resolve(config.use_vllm, defaults.use_vllm))


def _check_vocab(student, teacher) -> None:
    if student.config.vocab_size != teacher.config.vocab_size:
        raise ConfigError("the teacher and the student have different vocabularies", [
            Problem("teacher", f"vocab {teacher.config.vocab_size} vs the student's "
                               f"{student.config.vocab_size}; distil from the pre-SFT base")])


def build_opd_trainer(config: OpdStageConfig, defaults):
    """`(trainer, tokenizer, prompt rows)` ready to train."""
    from datasets import Dataset
    from trl import DistillationTrainer

    student, tokenizer = load_model(config.base, defaults, config)
    teacher, _ = load_model(config.teacher, defaults, config)
    _check_vocab(student, teacher)
    teacher.eval()
    rows = load_opd_prompts(config.prompts, config.prompts_size, config.seed)
    trainer = DistillationTrainer(model=student, teacher_model=teacher,
                                  args=opd_args(config, defaults),
                                  train_dataset=Dataset.from_list(rows),
                                  processing_class=tokenizer, peft_config=peft_config(config))
    return trainer, tokenizer, rows


@profiled
def run_opd(config: OpdStageConfig, *, tracking=None, progress: Progress | None = None,
            resume: bool = False) -> StageResult:
    """Run General OPD: `config.base` (student) + `config.teacher` -> `config.output_dir`."""
    defaults = setup(config)
    trainer, tokenizer, rows = build_opd_trainer(config, defaults)
    source = rows_digest(rows) if config.prompts == "builtin" else file_digest(config.prompts)
    return run_stage("opd", trainer, tokenizer, config, resume=resume,
                     tracking=tracking_for(config, "opd", tracking),
                     dataset_hashes={"opd_prompts": source}, progress=progress)
