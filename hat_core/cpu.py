"""What this CPU computes natively: bf16 arithmetic in hardware (AMX or AVX512-BF16) or not.

bf16 autocast on a CPU without it is emulated and much slower than fp32: on an AVX2 EPYC a
toy-size step (8 x 768 tokens, one thread) took 16.1 s in bf16 against 1.6 s in fp32, and
`torch.compile` did not help there either (2.2 s fp32, 14.3 s bf16). Training therefore asks
for bf16 (and, for the base build, compiling) only where `cpu_bf16_native()` holds.

    if cpu_bf16_native(): ...
"""

from __future__ import annotations

import functools

BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})


@functools.cache
def cpu_bf16_native() -> bool:
    """Whether this CPU has bf16 arithmetic in hardware (Linux `/proc/cpuinfo` flags)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        return False
    return bool(BF16_FLAGS & set(flags))
