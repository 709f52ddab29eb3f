"""`hat retrain` says first what it will build and how long that takes, and points to the
demo config; a base build prints its progress as plain lines (no terminal needed)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from flows.config import load_retrain_config
from flows.stages import BuildProgress
from hat_cli.retrain_cmd import what_it_builds
from hat_core.basemodel import get_size
from hat_core.basemodel.build import MANIFEST, config_hash

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_config_says_it_builds_the_tiny_base_and_how_long(tmp_path, monkeypatch):
    monkeypatch.setenv("HAT_CACHE_DIR", str(tmp_path / "cache"))
    text = what_it_builds(None, load_retrain_config(None), tmp_path / "home")
    assert "retrain_tiny.yaml (the default)" in text
    assert "the embedded `tiny` (seed 0), built first: 15-23 minutes" in text
    assert "--config examples/configs/retrain_demo.yaml" in text
    built = tmp_path / "home" / "models" / "base-tiny-seed0"
    built.mkdir(parents=True)
    (built / MANIFEST).write_text(json.dumps({"config_hash": config_hash(get_size("tiny"), 0)}))
    again = what_it_builds(None, load_retrain_config(None), tmp_path / "home")
    assert "`tiny` (seed 0), already built" in again


def test_a_named_config_with_a_model_directory_builds_nothing(tmp_path):
    demo = load_retrain_config(ROOT / "examples" / "configs" / "retrain_demo.yaml")
    text = what_it_builds(Path("mine.yaml"), demo.__class__(base_model="/models/qwen"), tmp_path)
    assert text == "retrain config: mine.yaml\nbase model: /models/qwen"


def test_build_progress_is_a_line_about_every_five_percent():
    out = io.StringIO()
    progress = BuildProgress("base model tiny (seed 0)", out)
    progress("corpus", {"samples": 10})
    for step in range(1, 1201):
        progress("step", {"step": step, "total": 1200, "loss": 2.5})
    lines = out.getvalue().splitlines()
    assert lines[0] == "base model tiny (seed 0): corpus {'samples': 10}"
    steps = [line for line in lines if "pre-training step" in line]
    assert 20 <= len(steps) <= 21 and "step 1200/1200, loss 2.500" in steps[-1]
    assert "min left" in steps[0]
