"""The demo's retrain configs (`examples/configs/retrain_demo.yaml`, the slow test's
`demo_retrain_test.yaml`) load, name a known base size and pass the stages' own loaders."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.config import load_retrain_config
from hat_cli.demo_retrain import DEMO_CONFIG
from hat_core.basemodel import get_size
from hat_core.training.config import build_stage_config

CONFIGS = [DEMO_CONFIG, Path(__file__).with_name("demo_retrain_test.yaml")]
JOB_INPUTS = {"sft": {"dataset": "d"}, "opd": {"teacher": "t"}, "rl": {}}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_demo_configs_load_and_their_stages_validate(path):
    config = load_retrain_config(path)
    assert config.base_model is None and get_size(config.base_size).name == config.base_size
    assert set(config.eval.zero_shot_suites) <= set(config.eval.suites)
    for stage in ("sft", "opd", "rl"):
        data = {**JOB_INPUTS[stage], **getattr(config, stage), "base": "b", "output_dir": "o"}
        build_stage_config(stage, data, check_paths=False)


def test_the_demo_default_is_the_demo_config():
    from hat_cli.demo_cmd import DemoState

    assert DemoState(episodes=15, seed=0).config_path == DEMO_CONFIG
    assert load_retrain_config(DEMO_CONFIG).base_size == "test"


@pytest.mark.parametrize("name", ["retrain_tiny.yaml", "retrain_gpu.yaml"])
def test_the_other_retrain_configs_load_and_their_stages_validate(name):
    config = load_retrain_config(DEMO_CONFIG.with_name(name))
    if config.base_model is None:
        get_size(config.base_size)
    for stage in ("sft", "opd", "rl"):
        data = {**JOB_INPUTS[stage], **getattr(config, stage), "base": "b", "output_dir": "o"}
        build_stage_config(stage, data, check_paths=False)
