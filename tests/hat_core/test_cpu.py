"""bf16 and compiling only where the CPU computes bf16 natively: the base sizes and the
training stages' device defaults follow `hat_core.cpu.cpu_bf16_native`."""

from __future__ import annotations

import pytest

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
