"""Device-aware defaults: bf16, gradient checkpointing and vLLM only when a GPU is present.

    defaults = device_defaults("auto")         # DeviceDefaults(device="cpu", bf16=False, ...)
    bf16 = resolve(config.bf16, defaults.bf16)  # an explicit config value wins

On a CPU, bf16 autocast pays only where the CPU computes bf16 natively (AMX or AVX512-BF16:
`hat_core.cpu.cpu_bf16_native`); elsewhere it is emulated and about ten times slower than
fp32 (see `hat_core.cpu`). The weights stay fp32 on a CPU either way
(autocast computes in bf16, the optimiser keeps fp32 master weights). Gradient checkpointing
only slows a tiny model down, and vLLM is not installed; on a GPU all three pay off.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from hat_core.cpu import cpu_bf16_native
from hat_core.errors import ConfigError, Problem


@dataclass(frozen=True)
class DeviceDefaults:
    device: str
    bf16: bool
    gradient_checkpointing: bool
    use_vllm: bool
    gpus: int


def _gpus() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def vllm_available() -> bool:
    return importlib.util.find_spec("vllm") is not None


def device_defaults(device: str = "auto") -> DeviceDefaults:
    """The defaults for `device` ("auto" picks cuda when a GPU is visible)."""
    gpus = _gpus()
    if device == "auto":
        device = "cuda" if gpus else "cpu"
    if device == "cuda" and not gpus:
        raise ConfigError("device 'cuda' was asked for but no GPU is visible",
                          [Problem("device", "valid options here: auto, cpu")])
    on_gpu = device == "cuda"
    return DeviceDefaults(device=device, bf16=on_gpu or cpu_bf16_native(),
                          gradient_checkpointing=on_gpu,
                          use_vllm=on_gpu and vllm_available(), gpus=gpus)


def resolve(value: bool | None, default: bool) -> bool:
    """An explicit config value, else the device default."""
    return default if value is None else value
