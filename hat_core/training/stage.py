"""What every stage shares: loading the model, TRL arguments, resume, saving, the result.

A stage reads a model directory (`config.base`) and writes one (`config.output_dir`):
checkpoints go to `<output_dir>/checkpoints/checkpoint-N` (what `--resume` continues from), the
final model (LoRA merged), its tokenizer and `hat_stage.json` (stage, config, hashes, metrics,
probe) to `<output_dir>` itself, loadable by `AutoModelForCausalLM.from_pretrained`.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from hat_core.errors import ConfigError, NotFoundError, Problem
from hat_core.training.config import StageConfig
from hat_core.training.device import DeviceDefaults, device_defaults, resolve

MANIFEST = "hat_stage.json"
Progress = Callable[[str, dict], None]


@dataclass(frozen=True)
class StageResult:
    """What a finished stage reports."""

    stage: str
    output_dir: Path
    steps: int
    metrics: dict[str, float]
    history: list[dict] = field(default_factory=list)
    resumed_from: str | None = None
    probe: dict | None = None
    run_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["output_dir"] = str(self.output_dir)
        return data


def profiled(run: Callable[..., StageResult]) -> Callable[..., StageResult]:
    """Run a stage under its config's render profile (`hat_core.harness.render.use_profile`; None
    keeps the active one), so its rows, rollouts and probe render harnesses that way."""
    @functools.wraps(run)
    def wrapper(config: StageConfig, **kwargs) -> StageResult:
        from hat_core.harness.render import use_profile

        with use_profile(config.render_profile):
            return run(config, **kwargs)
    return wrapper


def checkpoint_dir(config: StageConfig) -> Path:
    return Path(config.output_dir) / "checkpoints"


def last_checkpoint(config: StageConfig) -> str | None:
    """The newest complete `checkpoint-N` under the stage's checkpoint dir, or None.

    The Trainer writes `trainer_state.json` last, so a checkpoint without a readable one was
    cut off mid-save (a process killed while saving); one whose weights do not read (a
    truncated or corrupted `*.safetensors`, or none at all) is damaged. Either is skipped with
    a warning, and the step is saved again into the same folder when training gets there.
    """
    import logging

    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    folder = checkpoint_dir(config)
    if not folder.is_dir():
        return None
    steps = sorted(((int(p.name.rsplit("-", 1)[1]), p) for p in folder.iterdir()
                    if p.is_dir() and p.name.startswith(f"{PREFIX_CHECKPOINT_DIR}-")
                    and p.name.rsplit("-", 1)[1].isdigit()), reverse=True)
    for _, path in steps:
        if _complete(path):
            return str(path)
        logging.getLogger(__name__).warning("skipping incomplete checkpoint %s (%s)", path,
                                            _damage(path))
    return None


def _complete(checkpoint: Path) -> bool:
    return _damage(checkpoint) is None


def _damage(checkpoint: Path) -> str | None:
    """What makes `checkpoint` unusable for a resume, or None when it is complete."""
    from safetensors import SafetensorError, safe_open

    try:
        json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "no readable trainer_state.json: cut off while saving"
    weights = sorted(checkpoint.glob("*.safetensors"))
    if not weights:
        return "no *.safetensors weights"
    for file in weights:
        try:
            with safe_open(str(file), "pt") as f:
                f.keys()
        except (OSError, SafetensorError) as exc:
            return f"unreadable weights {file.name}: {exc}"
    return None


def setup(config: StageConfig) -> DeviceDefaults:
    """Device defaults and, when asked, the torch thread count."""
    import torch

    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    return device_defaults(config.device)


def load_model(path: str, defaults: DeviceDefaults, config: StageConfig):
    """`(model, tokenizer)` of a model directory: bf16 weights on a GPU with bf16 on; on a
    CPU always fp32 (bf16 there is autocast over fp32 master weights)."""
    import torch
    from transformers import AutoModelForCausalLM

    from hat_core.basemodel import check_model_dir, load_tokenizer

    folder = Path(path)
    if not folder.is_dir():
        raise NotFoundError(f"model directory {folder} does not exist", [
            Problem("base", "build one with `hat base build` or pass a model dir")])
    problems = check_model_dir(folder)
    if problems:
        raise ConfigError(f"{folder} is not a usable model directory", problems)
    bf16 = resolve(config.bf16, defaults.bf16) and defaults.device != "cpu"
    dtype = torch.bfloat16 if bf16 else torch.float32
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype)
    return model, load_tokenizer(folder)


def training_kwargs(config: StageConfig, defaults: DeviceDefaults) -> dict:
    """The arguments every TRL config of ours shares."""
    kwargs = dict(
        output_dir=str(checkpoint_dir(config)), max_steps=config.max_steps,
        learning_rate=config.learning_rate,
        per_device_train_batch_size=config.per_device_train_batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        warmup_steps=config.warmup_steps, logging_steps=config.logging_steps,
        save_strategy="steps", save_steps=config.save_steps,
        save_total_limit=config.save_total_limit, seed=config.seed,
        bf16=resolve(config.bf16, defaults.bf16),
        use_cpu=defaults.device == "cpu", report_to="none", disable_tqdm=True,
    )
    if config.torch_compile:
        kwargs["torch_compile"] = True
    # Always passed, under transformers' new name: TRL's configs default the old name
    # (`gradient_checkpointing`) to True, which transformers 5.23 maps onto this one, so leaving
    # it out recomputed every forward in the backward pass on CPU too (and warned each time).
    kwargs["activation_checkpointing"] = resolve(config.gradient_checkpointing,
                                                 defaults.gradient_checkpointing)
    return kwargs


def peft_config(config: StageConfig):
    """A peft `LoraConfig` when LoRA is enabled, else None (full fine-tune)."""
    if not config.lora.enabled:
        return None
    from peft import LoraConfig

    return LoraConfig(r=config.lora.r, lora_alpha=config.lora.alpha,
                      lora_dropout=config.lora.dropout, target_modules=config.lora.target_modules,
                      task_type="CAUSAL_LM")


class ProgressCallback(TrainerCallback):
    """Calls `progress("step", {...log record, "step": n, "max_steps": m})` on every log."""

    def __init__(self, progress: Progress):
        self.progress = progress

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs:
            self.progress("step", {"step": state.global_step, "max_steps": state.max_steps}
                          | dict(logs))


class HeapTrimCallback(TrainerCallback):
    """Every `every` steps, hands the C heap's free pages back to the system
    (`hat_core.cpu.release_free_memory`): on CPU, steps of varying tensor sizes otherwise
    grow the process by hundreds of MB a minute."""

    def __init__(self, every: int = 25):
        self.every = every
        self.trims = 0

    def on_step_end(self, args, state, control, **kwargs):
        from hat_core.cpu import release_free_memory

        if state.global_step % self.every == 0 and release_free_memory():
            self.trims += 1


def callbacks(tracking, progress: Progress | None, cpu: bool = False) -> list[TrainerCallback]:
    out = [tracking.callback()] if tracking is not None else []
    out += [HeapTrimCallback()] if cpu else []
    return out + ([ProgressCallback(progress)] if progress else [])


def tracking_for(config: StageConfig, stage: str, tracking):
    """The caller's tracking, else one from `config.tracking.uri`, else None."""
    if tracking is not None or not config.tracking.uri:
        return tracking
    from hat_core.training.tracking import StageTracking

    return StageTracking(config.tracking.uri, config.tracking.experiment, stage,
                         config.tracking.run_name)


def train(trainer, config: StageConfig, resume: bool) -> tuple[Any, str | None]:
    """`trainer.train()`, from the last checkpoint when `resume` and one exists."""
    checkpoint = last_checkpoint(config) if resume else None
    return trainer.train(resume_from_checkpoint=checkpoint), checkpoint


def save_model(trainer, tokenizer, output_dir: Path):
    """The final weights (LoRA merged into them) and the tokenizer, as a plain model dir;
    returns the saved (merged) model."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.save_pretrained(str(output_dir))
    tokenizer.save_pretrained(str(output_dir))
    return model


def run_stage(stage: str, trainer, tokenizer, config: StageConfig, *, resume: bool,
              tracking, dataset_hashes: dict[str, str], progress: Progress | None,
              extra: Callable[[], dict] | None = None) -> StageResult:
    """Train, save, probe, write the manifest, log to tracking: the tail of every stage."""
    if tracking is not None:
        tracking.start(config, dataset_hashes)
    for callback in callbacks(tracking, progress, cpu=trainer.args.use_cpu):
        trainer.add_callback(callback)
    # the caller shows progress (or nothing): never print the raw log dicts, which
    # transformers' PrinterCallback does whenever tqdm is off (`disable_tqdm=True`)
    from transformers import PrinterCallback

    trainer.remove_callback(PrinterCallback)
    try:
        started = time.perf_counter()
        output, resumed_from = train(trainer, config, resume)
        wall = time.perf_counter() - started
        output_dir = Path(config.output_dir)
        model = save_model(trainer, tokenizer, output_dir)
        probe = _probe(model, tokenizer, config, progress)
        result = StageResult(
            stage=stage, output_dir=output_dir, steps=trainer.state.global_step,
            metrics=dict(output.metrics) | {"wall_seconds": round(wall, 3)},
            history=list(trainer.state.log_history), resumed_from=resumed_from, probe=probe,
            run_id=tracking.run_id if tracking is not None else None,
            extra=extra() if extra else {})
        write_manifest(result, config, dataset_hashes)
        if tracking is not None:
            tracking.finish(result)
    except BaseException:
        if tracking is not None:
            tracking.fail()
        raise
    return result


def _probe(model, tokenizer, config: StageConfig, progress: Progress | None) -> dict | None:
    if not config.probe.enabled:
        return None
    from hat_core.training.probe import run_probe

    if progress:
        progress("probe", {})
    return run_probe(model, tokenizer, config.probe).to_dict()


def write_manifest(result: StageResult, config: StageConfig,
                   dataset_hashes: dict[str, str]) -> None:
    data = {"stage": result.stage, "config": config.to_dict(), "config_hash": config.hash(),
            "dataset_hashes": dataset_hashes, "steps": result.steps, "metrics": result.metrics,
            "resumed_from": result.resumed_from, "probe": result.probe, "extra": result.extra,
            "run_id": result.run_id}
    (result.output_dir / MANIFEST).write_text(
        json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


def read_manifest(output_dir: str | Path) -> dict | None:
    """The `hat_stage.json` of a stage's output dir, or None."""
    file = Path(output_dir) / MANIFEST
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else None
