"""`RetrainConfig`: the example configs load and their stage sections pass the stages' own
loaders; bad keys are reported together with the valid ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.config import load_retrain_config, retrain_config_from_dict
from hat_core.errors import ConfigError
from hat_core.training.config import build_stage_config

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = [ROOT / "examples" / "configs" / "retrain_tiny.yaml",
           ROOT / "examples" / "configs" / "retrain_gpu.yaml",
           Path(__file__).with_name("retrain_test.yaml")]
JOB_INPUTS = {"sft": {"dataset": "d"}, "opd": {"teacher": "t"}, "rl": {}}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_example_configs_load_and_their_stages_validate(path):
    config = load_retrain_config(path)
    assert config.registry_name == "hat-agent" and config.gates.metrics["t1"] == "t1.accuracy"
    for stage in ("sft", "opd", "rl"):
        data = {**JOB_INPUTS[stage], **getattr(config, stage), "base": "b", "output_dir": "o"}
        build_stage_config(stage, data, check_paths=False)
    assert len(config.config_hash()) == 64


def test_default_is_the_tiny_config():
    assert load_retrain_config() == load_retrain_config(CONFIGS[0])


def test_bad_keys_are_listed_together():
    with pytest.raises(ConfigError) as err:
        retrain_config_from_dict({"registy_name": "x", "eval": {"suits": ["t1"]},
                                  "gates": {"t1_tolerance": 5}, "job_lease_s": 0,
                                  "sft": "fast"})
    report = err.value.report()
    assert "retrain.registy_name: unknown key; valid keys: base_model" in report
    assert "retrain.eval.suits: unknown key; valid keys: suites" in report
    assert "t1_tolerance: must be a number in [0, 1], got 5" in report
    assert "retrain.job_lease_s: must be > 0 seconds" in report
    assert "retrain.sft: must be a mapping" in report


def test_a_gates_file_with_bad_paired_settings_names_the_file_and_each_key(tmp_path):
    gates = tmp_path / "gates.yaml"
    gates.write_text("min_cases: 0\nalpha: 0\nmetrics: {t2: t2.mean_accuracy}\n",
                     encoding="utf-8")
    config = tmp_path / "retrain.yaml"
    config.write_text("registry_name: hat-agent\ngates: gates.yaml\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_retrain_config(config)
    report = err.value.report()
    assert f"{gates}.min_cases: must be a whole number of cases >= 1, got 0" in report
    assert f"{gates}.alpha: must be a significance level in (0, 1), e.g. 0.05; got 0" in report
    assert (f"{gates}.metrics.t2: 't2.mean_accuracy' has no per-case outcome to pair; write "
            "SUITE.METRIC with METRIC one of accuracy, pass_rate, bad_case_rate" in report)


def test_the_demo_config_asks_for_more_cases_than_it_plays():
    config = load_retrain_config(ROOT / "examples" / "configs" / "retrain_demo.yaml")
    assert config.gates.min_cases > config.eval.episodes  # its paired gates are inconclusive


def test_warm_start_trains_from_the_champion_with_its_sft_overrides():
    from flows.retrain import start_of

    champion = {"version": "3", "model_dir": "/models/champion"}
    cold = retrain_config_from_dict({"sft": {"max_steps": 100, "learning_rate": 1e-3}})
    assert start_of(cold, "/base", champion) == (
        "/base", {"sft": {"max_steps": 100, "learning_rate": 1e-3}, "opd": {}, "rl": {}})
    warm = retrain_config_from_dict({"sft": {"max_steps": 100, "learning_rate": 1e-3},
                                     "warm_start": {"enabled": True,
                                                    "sft": {"max_steps": 20}}})
    model, settings = start_of(warm, "/base", champion)
    assert model == "/models/champion"
    assert settings["sft"] == {"max_steps": 20, "learning_rate": 1e-3}
    assert warm.sft == {"max_steps": 100, "learning_rate": 1e-3}  # the config is unchanged
    assert start_of(warm, "/base", None)[0] == "/base"  # the first job: no champion yet
    with pytest.raises(ConfigError) as bad:
        retrain_config_from_dict({"warm_start": {"enabled": True, "steps": 20}})
    assert [p.path for p in bad.value.problems] == ["retrain.warm_start.steps"]
    assert "valid keys: enabled, sft" in bad.value.problems[0].message


def test_a_base_model_path_that_is_no_model_is_refused_naming_the_key_and_the_folder(
        tmp_path, monkeypatch):
    """`base_model` is read as given, a relative path from the working directory: one that
    holds no model is refused before anything trains, saying where it looked."""
    from flows.stages import base_model_dir
    from hat_core.errors import NotFoundError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(NotFoundError) as err:
        base_model_dir("examples/models/toy-long", "test", 0, tmp_path / "home")
    said = err.value.report()
    assert "base_model examples/models/toy-long: not a model directory" in said
    assert f"working directory {tmp_path}" in said and "- base_model:" in said
    assert not (tmp_path / "home").exists()  # nothing built instead
    shipped = ROOT / "examples" / "models" / "toy-long"
    assert base_model_dir(str(shipped), "test", 0, tmp_path / "home") == shipped
