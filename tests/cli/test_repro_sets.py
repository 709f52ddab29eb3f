"""`hat repro --set`: a dotted override of the repro config, refused with the key named (and
nothing written) when the config has no such key or the value is invalid."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HAT = str(Path(sys.executable).parent / "hat")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("override, named", [
    ("sft_steps=1200", "sft_steps"),            # no such key
    ("eval.episodes=many", "eval.episodes"),    # not a number
    ("max_steps", "max_steps"),                 # no value
    ("sft.max_steps=[1", "--set sft.max_steps: not valid YAML"),
])
def test_a_bad_set_is_refused_before_anything_is_written(tmp_path, override, named):
    done = subprocess.run([HAT, "repro", "--config", "examples/configs/repro_full.yaml",
                           "--set", override, "--work", str(tmp_path / "work")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert named in done.stderr
    assert not (tmp_path / "work").exists()
