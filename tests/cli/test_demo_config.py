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


@pytest.mark.parametrize("name", ["retrain_tiny.yaml", "retrain_gpu.yaml",
                                  "retrain_demo_toylong.yaml"])
def test_the_other_retrain_configs_load_and_their_stages_validate(name):
    config = load_retrain_config(DEMO_CONFIG.with_name(name))
    if config.base_model is None:
        get_size(config.base_size)
    for stage in ("sft", "opd", "rl"):
        data = {**JOB_INPUTS[stage], **getattr(config, stage), "base": "b", "output_dir": "o"}
        build_stage_config(stage, data, check_paths=False)


def test_the_shipped_base_demo_config_names_the_shipped_base_and_decidable_sizes():
    """`retrain_demo_toylong.yaml` trains from the shipped `toy-long` (no build), renders the
    layout that base was built on, and plays at least `min_cases` scenarios per suite, so
    its paired verdicts can be decided."""
    from hat_core.basemodel.build import read_manifest

    config = load_retrain_config(DEMO_CONFIG.with_name("retrain_demo_toylong.yaml"))
    root = DEMO_CONFIG.parents[2]
    manifest = read_manifest(root / config.base_model)
    assert manifest["size"] == config.base_size == "toy-long"
    assert config.eval.render_profile == config.data["render_profile"] == \
        manifest["render_profile"]
    assert config.eval.episodes >= config.gates.min_cases
    assert config.eval.limit is None or config.eval.limit >= config.gates.min_cases


def test_the_shipped_base_demo_sizes_let_every_margin_pass():
    """Each non-inferiority gate of `retrain_demo_toylong.yaml` plays at least the cases at
    which a model that changes no case can pass its margin (`cases_to_decide`): else the gate
    is inconclusive by construction, as IFE-P was on 45 prompts."""
    from hat_core.evaluation.ifeval.verdicts import load_prompts
    from hat_core.evaluation.suites.ifeval import DEFAULT_IFEVAL_SET
    from hat_core.release.evidence import cases_to_decide

    config = load_retrain_config(DEMO_CONFIG.with_name("retrain_demo_toylong.yaml"))
    g, ev = config.gates, config.eval
    cap = ev.limit if ev.limit is not None else float("inf")
    t1 = min(ev.episodes, cap)
    t2 = t1 * ev.variants
    ifeval = min(len(load_prompts(DEFAULT_IFEVAL_SET)), cap)
    for cases, margin in ((t1, g.t1_tolerance), (t2, g.t2_tolerance),
                          (t2, g.bad_case_tolerance), (ifeval, g.ife_p_margin),
                          (t1, g.zero_shot_margin), (t2, g.zero_shot_margin)):
        assert cases >= cases_to_decide(margin, g.alpha), (cases, margin)
    assert cases_to_decide(g.ife_p_margin, g.alpha) > 45  # what the old cap could never do


def test_the_closing_note_about_the_model_follows_the_config():
    """The default config's caveat (every model scores 0) is printed for it alone; another
    config gets which base and budget it used, and no claim about scores."""
    from hat_cli.demo_cmd import QUALITY, DemoState, model_note

    assert model_note(DemoState(episodes=15, seed=0)) == QUALITY
    other = DemoState(episodes=15, seed=0,
                      config_path=DEMO_CONFIG.with_name("retrain_demo_toylong.yaml"))
    note = model_note(other)
    assert "examples/models/toy-long" in note and "400 HSA-SFT steps" in note
    assert "scores 0" not in note and "retrain_demo_toylong.yaml" in note
