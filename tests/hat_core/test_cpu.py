"""bf16 and compiling only where the CPU computes bf16 natively: the base sizes and the
training stages' device defaults follow `hat_core.cpu.cpu_bf16_native`. Freed heap pages go
back to the system on `release_free_memory`, which CPU training stages call every few steps."""

from __future__ import annotations

import ctypes
import os

import pytest

from hat_core import cpu
from hat_core.basemodel import build, sizes
from hat_core.cpu import cpu_bf16_native
from hat_core.training import device


@pytest.mark.parametrize("native", [True, False])
def test_base_sizes_keep_bf16_and_compile_only_on_native_bf16(monkeypatch, native):
    monkeypatch.setattr(sizes, "cpu_bf16_native", lambda: native)
    toy = sizes.get_size("toy")
    assert (toy.bf16, toy.compile) == (native, native)
    assert sizes.SIZES["toy"].bf16 and sizes.SIZES["toy"].compile  # the size allows both


def test_builds_with_and_without_bf16_never_share_a_cache_key(monkeypatch):
    monkeypatch.setattr(sizes, "cpu_bf16_native", lambda: True)
    native = build.config_hash(sizes.get_size("toy"), 0)
    monkeypatch.setattr(sizes, "cpu_bf16_native", lambda: False)
    emulated = build.config_hash(sizes.get_size("toy"), 0)
    assert native != emulated
    assert build.config_hash(sizes.get_size("test"), 0) == build.config_hash(
        sizes.SIZES["test"], 0)  # sizes without bf16 keep their keys


@pytest.mark.parametrize("native", [True, False])
def test_cpu_training_defaults_to_bf16_only_on_native_bf16(monkeypatch, native):
    monkeypatch.setattr(device, "cpu_bf16_native", lambda: native)
    assert device.device_defaults("cpu").bf16 is native


def test_the_flag_is_read_from_this_machine():
    flags = open("/proc/cpuinfo", encoding="utf-8").read()
    assert cpu_bf16_native() == ("amx_bf16" in flags or "avx512_bf16" in flags)


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(cpu._libc() is None, reason="needs glibc's malloc_trim")
def test_release_free_memory_returns_freed_heap_pages_to_the_system():
    """Freed chunks below the top of the heap stay in the process until trimmed."""
    libc = cpu._libc()
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    size, count = 64 * 1024, 3200  # 200 MB in chunks under glibc's mmap threshold
    chunks = [libc.malloc(size) for _ in range(count)]
    for chunk in chunks:
        ctypes.memset(chunk, 1, size)  # touch every page
    pin = libc.malloc(size)  # keeps the heap's top in use, so free() cannot shrink it
    for chunk in chunks:
        libc.free(chunk)
    before = rss_bytes()
    assert cpu.release_free_memory()
    after = rss_bytes()
    libc.free(pin)
    assert before - after > 150 * 1024 * 1024, (before, after)


def test_the_heap_trim_callback_trims_every_n_steps():
    from types import SimpleNamespace

    from hat_core.training.stage import HeapTrimCallback, callbacks

    trim = HeapTrimCallback(every=10)
    for step in range(1, 31):
        trim.on_step_end(None, SimpleNamespace(global_step=step), None)
    assert trim.trims == (3 if cpu._libc() is not None else 0)
    assert any(isinstance(c, HeapTrimCallback) for c in callbacks(None, None, cpu=True))
    assert not any(isinstance(c, HeapTrimCallback) for c in callbacks(None, None, cpu=False))


def test_torch_threads_sets_the_count_inside_and_puts_it_back_after_an_error():
    import torch

    before = torch.get_num_threads()
    inside = 2 if before == 1 else 1
    with pytest.raises(RuntimeError, match="inside"):
        with cpu.torch_threads(inside):
            assert torch.get_num_threads() == inside
            raise RuntimeError("inside")
    assert torch.get_num_threads() == before
    with cpu.torch_threads(None):
        assert torch.get_num_threads() == before
