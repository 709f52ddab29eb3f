"""What this CPU computes natively: bf16 arithmetic in hardware (AMX or AVX512-BF16) or not.

bf16 autocast on a CPU without it is emulated and much slower than fp32: on an AVX2 EPYC a
toy-size step (8 x 768 tokens, one thread) took 16.1 s in bf16 against 1.6 s in fp32, and
`torch.compile` did not help there either (2.2 s fp32, 14.3 s bf16). Training therefore asks
for bf16 (and, for the base build, compiling) only where `cpu_bf16_native()` holds.

    if cpu_bf16_native(): ...

`torch_threads(n)` sets torch's intra-op threads for a block and puts them back. On 2 cores,
two busy processes at 2 threads each slow each other down 1.5-3x (OpenMP threads wait for
each other): greedy decoding of the 1.3M-parameter `toy-long` beside a one-thread training
process ran at 98 tokens/s on 2 threads against 340 on 1 (404 on 2 threads alone), and
slowed that process by 28%, so evaluation beside training runs on one
(`benchmarks/eval_threads.py`, docs/evaluation.md "Threads").

`release_free_memory()` hands the C heap's free pages back to the system (glibc's
`malloc_trim`). Packed SFT computes logits only where the loss is, so every step allocates
tensors of another size; glibc keeps the freed chunks, and a CPU training process grew by
100-500 MB a minute (5.6 GB after 13 minutes of the CPU recipe, on its way past the machine's
memory). Trimming every few dozen steps (`stage.HeapTrimCallback`) keeps it flat.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
from collections.abc import Iterator

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


@functools.cache
def _libc():
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name)
    return libc if hasattr(libc, "malloc_trim") else None  # glibc only (not musl, macOS)


def release_free_memory() -> bool:
    """Return the C heap's free pages to the system; False where the C library cannot."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to `n` inside the block and put back after it;
    `None` leaves it as it is."""
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
