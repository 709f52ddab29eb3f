"""`DataConfig`: defaults < YAML < overrides; every problem reported with the valid keys."""

from __future__ import annotations

import pytest

from hat_core.data.config import DataConfig, load_data_config
from hat_core.errors import ConfigError


def test_defaults_then_yaml_then_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("scenarios: 12\nteacher: {slip_rate: 0.3}\nrejection: {best_of_n: 2}\n",
                    encoding="utf-8")
    cfg = load_data_config(path, {"scenarios": 20, "retry.full_retry_share": 0.5})
    assert cfg.scenarios == 20  # the command line wins over YAML
    assert cfg.teacher.slip_rate == 0.3 and cfg.rejection.best_of_n == 2
    assert cfg.retry.full_retry_share == 0.5
    assert cfg.variants == DataConfig().variants  # untouched keys keep their defaults


def test_unknown_keys_are_rejected_listing_the_valid_ones(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("scenaros: 3\nteacher: {kind: oracle, temprature: 1}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_data_config(path)
    report = err.value.report()
    assert "scenaros: unknown key; valid keys: seed, scenarios, variants" in report
    assert "teacher.temprature: unknown key; valid keys: kind, model_dir" in report


def test_every_bad_value_is_reported_at_once():
    with pytest.raises(ConfigError) as err:
        load_data_config(None, {"rejection.min_accuracy": 1.5, "scenarios": 0,
                                "retry.full_retry_share": -0.1, "scenarios_per_surface": -1})
    paths = {p.path for p in err.value.problems}
    assert paths == {"rejection.min_accuracy", "scenarios", "retry.full_retry_share",
                     "scenarios_per_surface"}


@pytest.mark.parametrize("overrides, path", [
    ({"teacher.kind": "gpt"}, "teacher.kind"),
    ({"teacher.kind": "openai"}, "teacher.base_url"),
    ({"teacher.kind": "transformers"}, "teacher.model_dir"),
])
def test_teacher_settings_are_checked(overrides, path):
    with pytest.raises(ConfigError) as err:
        load_data_config(None, overrides)
    assert [p.path for p in err.value.problems] == [path]


def test_the_example_configs_load():
    from data_helpers import ROOT

    tiny = load_data_config(ROOT / "examples" / "configs" / "data_tiny.yaml")
    # The GPU config names a prompt set on a production disk; paths are checked up front.
    with pytest.raises(ConfigError, match="opd.source|invalid data config"):
        load_data_config(ROOT / "examples" / "configs" / "data_gpu.yaml")
    gpu = load_data_config(ROOT / "examples" / "configs" / "data_gpu.yaml",
                           {"opd.source": "builtin"})
    assert tiny.teacher.kind == "oracle" and gpu.teacher.kind == "openai"
    assert (1 + gpu.variants) * gpu.scenarios_per_surface >= 10_000
    assert tiny.content_hash() != gpu.content_hash()
    cpu = load_data_config(ROOT / "examples" / "configs" / "data_cpu.yaml")
    assert cpu.scenarios >= 1000 and cpu.catalog_size >= 100 and cpu.variants >= 500
    assert cpu.scenarios_per_surface > 0 and cpu.render_profile == "compact"


def test_scenarios_per_surface_at_its_default_keeps_older_content_hashes():
    # the key was added later: a config that does not use it hashes as before
    assert "scenarios_per_surface" not in load_data_config(None).to_dict()
    assert load_data_config(None, {"scenarios_per_surface": 6}).to_dict()[
        "scenarios_per_surface"] == 6


def test_the_long_reasoning_teacher_setting_is_checked_and_hashed_only_when_used():
    assert "reasoning_tokens" not in load_data_config(None).to_dict()["teacher"]
    long = load_data_config(None, {"teacher.reasoning_tokens": 90})
    assert long.to_dict()["teacher"]["reasoning_tokens"] == 90
    assert long.content_hash() != load_data_config(None).content_hash()
    with pytest.raises(ConfigError) as err:
        load_data_config(None, {"teacher.reasoning_tokens": -5})
    assert [p.path for p in err.value.problems] == ["teacher.reasoning_tokens"]
    from data_helpers import ROOT

    cpu = load_data_config(ROOT / "examples" / "configs" / "data_cpu_fixed.yaml")
    assert cpu.variants == 0 and cpu.scenarios_per_surface == 0


def test_the_plan_style_is_checked_and_hashed_only_when_not_plain():
    assert "plan" not in load_data_config(None).to_dict()["teacher"]
    anchored = load_data_config(None, {"teacher.plan": "anchored"})
    assert anchored.to_dict()["teacher"]["plan"] == "anchored"
    assert anchored.content_hash() != load_data_config(None).content_hash()
    with pytest.raises(ConfigError) as err:
        load_data_config(None, {"teacher.plan": "quoted"})
    assert [p.path for p in err.value.problems] == ["teacher.plan"]
    assert "plain, anchored" in err.value.problems[0].message


def test_paths_and_the_hsa_section_are_checked_up_front(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_data_config(None, {"opd.source": str(tmp_path / "nope"),
                                "logs": [str(tmp_path / "none.jsonl")],
                                "hsa": {"transforms": {"rename_all": {"weight": 1}}}})
    paths = [p.path for p in err.value.problems]
    assert paths == ["opd.source", "logs[0]", "hsa.transforms.rename_all"]
    with pytest.raises(ConfigError):
        load_data_config(None, {"logs": "one.jsonl"})
