"""HsaConfig: defaults, YAML loading, and errors that list the valid keys."""

from __future__ import annotations

import random

import pytest

from hat_core.errors import ConfigError
from hat_core.hsa.augment import choose_transforms
from hat_core.hsa.config import (
    PROBABILITIES,
    TRANSFORMS,
    HsaConfig,
    TransformConfig,
    config_from_data,
    load_config,
)


def test_defaults_enable_every_transform():
    cfg = HsaConfig()
    assert cfg.active() == TRANSFORMS
    assert set(cfg.probabilities) == set(PROBABILITIES)
    assert len(cfg.content_hash()) == 64


def test_yaml_overrides_the_defaults(tmp_path):
    path = tmp_path / "hsa.yaml"
    path.write_text("pool: heldout\ntransforms:\n  distractors: {enabled: false}\n"
                    "  rename_tools: {weight: 1.0}\nprobabilities:\n  pinyin: 0.5\n"
                    "max_distractors: 2\n", encoding="utf-8")
    cfg = load_config(path)
    assert cfg.pool == "heldout"
    assert cfg.transforms["distractors"] == TransformConfig(False, 0.3)
    assert cfg.transforms["rename_tools"] == TransformConfig(True, 1.0)
    assert cfg.p("pinyin") == 0.5 and cfg.max_distractors == 2
    assert "distractors" not in cfg.active()


def test_every_problem_is_reported_with_the_valid_keys():
    with pytest.raises(ConfigError) as info:
        config_from_data({"pol": "train", "transforms": {"rename": {}, "reorder": {"wieght": 1}},
                          "probabilities": {"pinyn": 0.1}})
    report = info.value.report()
    assert "(4 problems)" in str(info.value)
    assert "pol: unknown key; valid keys: pool, transforms" in report
    assert "transforms.rename: unknown key; valid keys: describe, hooks" in report
    assert "transforms.reorder.wieght: unknown key; valid keys: enabled, weight" in report
    assert "probabilities.pinyn: unknown key; valid keys: rename_element" in report


def test_bad_values_are_reported():
    with pytest.raises(ConfigError) as info:
        config_from_data({"pool": "dev", "transforms": {"describe": {"weight": 1.5}},
                          "probabilities": {"opaque": -0.1}, "max_distractors": "3"})
    report = info.value.report()
    assert "pool: unknown pool 'dev'; valid: train, heldout" in report
    assert "transforms.describe.weight: must be a number in [0, 1]" in report
    assert "probabilities.opaque: must be a number in [0, 1]" in report
    assert "max_distractors: must be int, got '3'" in report


def test_missing_or_broken_files_raise_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="no such HSA config file"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("transforms: [", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    bad.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config(bad)


def test_only_and_with_weights():
    cfg = HsaConfig().only("reorder")
    assert cfg.active() == ("reorder",)
    assert choose_transforms(random.Random(0), cfg) == ("reorder",)
    raised = HsaConfig().with_weights({"describe": 1.0})
    assert raised.transforms["describe"].weight == 1.0
    assert raised.transforms["hooks"] == HsaConfig().transforms["hooks"]


def test_min_transforms_guarantees_at_least_one():
    cfg = HsaConfig().with_weights({t: 0.01 for t in TRANSFORMS})
    for seed in range(50):
        assert len(choose_transforms(random.Random(seed), cfg)) >= 1
