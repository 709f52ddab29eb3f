"""Reviewed bad cases sent to training, replayed into a real build: rows, manifest, skips."""

from __future__ import annotations

import logging
import random

import pytest
from data_helpers import tiny_config
from datasets import load_from_disk

from hat_core.data.build import build
from hat_core.data.config import DataConfig, load_data_config
from hat_core.data.feedback import SentCase, case_id_of
from hat_core.errors import ConfigError
from hat_core.evaluation.badcases import ListBadCaseSink
from hat_core.evaluation.evaluate import EvalOptions, evaluate
from hat_core.sim.policy import RandomPolicy


@pytest.fixture(scope="module")
def episodes(harness) -> list[dict]:
    """Stored-episode dicts of real bad cases: a random policy failing T1 cases."""
    sink = ListBadCaseSink()
    evaluate(RandomPolicy(random.Random(0)), harness, ["t1"], EvalOptions(episodes=15),
             bad_cases=sink)
    return [r.episode for r in sink.records]


def test_evaluation_records_the_world_of_each_bad_case(episodes):
    assert episodes and all(e["world"] == {"seed": "hat-eval:0", "catalog_size": 24}
                            for e in episodes)


def test_sent_cases_become_rows_and_are_listed_in_the_manifest(harness, episodes, tmp_path,
                                                               caplog):
    cases = [SentCase(11, episodes[0]), SentCase(12, episodes[1]),
             SentCase(13, {"scenario": {"id": "broken"}}),
             SentCase(14, {k: v for k, v in episodes[2].items() if k != "world"})]
    with caplog.at_level(logging.WARNING):
        result = build(harness, tiny_config(), tmp_path / "ds", bad_cases=cases)
    fed = result.manifest["bad_cases"]
    assert fed["ids"] == [11, 12] and fed["copies"] == 2
    assert [s["id"] for s in fed["skipped"]] == [13, 14]
    assert "no readable scenario" in fed["skipped"][0]["reason"]
    assert "records no world" in fed["skipped"][1]["reason"]
    assert "bad case 13 skipped" in caplog.text and "bad case 14 skipped" in caplog.text
    data = load_from_disk(str(result.out / "dataset"))
    rows = [r for s in data for r in data[s].to_list() if r["source"] == "bad_case"]
    assert len(rows) == fed["rows"] == result.manifest["counts"]["source"]["bad_case"] == 4
    assert {case_id_of(r["scenario_id"]) for r in rows} == {11, 12}
    assert {r["variant_id"] for r in rows if case_id_of(r["scenario_id"]) == 11} >= {
        "original"}
    assert all(r["accuracy"] == 1.0 for r in rows)  # played right, not the failed answer
    assert sum(fed["splits"].values()) == fed["rows"]


def test_a_case_replayed_in_the_wrong_world_is_skipped(harness, episodes, tmp_path):
    wrong = {**episodes[0], "world": {"seed": "somewhere-else", "catalog_size": 24}}
    result = build(harness, tiny_config(scenarios=15, variants=0), tmp_path / "w",
                   bad_cases=[SentCase(21, wrong)])
    fed = result.manifest["bad_cases"]
    assert fed["ids"] == [] and fed["rows"] == 0 and fed["skipped"][0]["id"] == 21


def test_no_copies_reads_no_case(harness, episodes, tmp_path):
    result = build(harness, tiny_config(scenarios=15, variants=0, bad_case_copies=0),
                   tmp_path / "n", bad_cases=[SentCase(31, episodes[0])])
    assert result.manifest["bad_cases"]["ids"] == []
    assert "bad_case" not in result.manifest["counts"]["source"]


def test_the_copies_are_validated_and_the_default_keeps_older_hashes():
    for bad in (-1, 1.5, "two", True):
        with pytest.raises(ConfigError) as err:
            load_data_config(None, {"bad_case_copies": bad})
        assert [p.path for p in err.value.problems] == ["bad_case_copies"]
    assert DataConfig().bad_case_copies == 2 and "bad_case_copies" not in DataConfig().to_dict()
    assert load_data_config(None, {"bad_case_copies": 3}).to_dict()["bad_case_copies"] == 3
