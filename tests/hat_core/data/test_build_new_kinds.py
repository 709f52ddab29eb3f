"""Data builds and the scenario kinds a harness adds: v3 (bundle) gets bundle rows, weighted up
against a previous harness; v1 and v2 builds are the same as ever."""

from __future__ import annotations

import pytest
from data_helpers import ROOT, tiny_config
from datasets import load_from_disk

from hat_core.data.build import build, scenario_extra
from hat_core.errors import ConfigError
from hat_core.harness.io import load_harness

HARNESSES = ROOT / "examples" / "harnesses"


@pytest.fixture(scope="module")
def weeks():
    return {v: load_harness(HARNESSES / f"{v}.yaml") for v in ("v1", "v2", "v3")}


def test_extra_scenarios_per_harness(weeks):
    config = tiny_config(scenarios=60)
    assert scenario_extra(weeks["v1"], config) == {}
    assert scenario_extra(weeks["v2"], config, weeks["v1"]) == {}
    assert scenario_extra(weeks["v3"], config) == {"bundle": 4}  # one stratum
    assert scenario_extra(weeks["v3"], config, weeks["v2"]) == {"bundle": 20}  # 25% of 80
    assert scenario_extra(weeks["v3"], tiny_config(scenarios=60, new_kind_share=0.0),
                          weeks["v2"]) == {"bundle": 4}


def test_default_share_keeps_older_config_hashes():
    assert "new_kind_share" not in tiny_config().to_dict()
    assert tiny_config(new_kind_share=0.4).to_dict()["new_kind_share"] == 0.4
    with pytest.raises(ConfigError) as err:
        tiny_config(new_kind_share=1.0)
    assert [p.path for p in err.value.problems] == ["new_kind_share"]


def test_a_v3_build_against_v2_trains_the_new_skill(weeks, tmp_path):
    config = tiny_config(scenarios=15, variants=0)
    result = build(weeks["v3"], config, tmp_path / "v3", previous=weeks["v2"])
    rows = [r for split in load_from_disk(str(result.out / "dataset")).values()
            for r in split.to_list()]
    bundle = [r for r in rows if r["kind"] == "bundle"]
    assert bundle and {r["skill"] for r in bundle} == {"bundle_deals"}
    assert result.report.success
