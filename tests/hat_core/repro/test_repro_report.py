"""The reproduction table's aggregation and config: mean ± std over seeds, the bad-case
reduction against the base, the markdown layout, config validation."""

from __future__ import annotations

import json
import math

import pytest

from hat_core.errors import ConfigError
from hat_core.repro.config import ARMS, load_repro_config
from hat_core.repro.report import (
    COLUMNS,
    arm_values,
    badcase_reduction,
    cell,
    failure_types,
    failures_markdown,
    markdown_table,
    mean_std,
    plot_bars,
    plotted_columns,
    right_tool,
    right_tool_markdown,
)
from hat_core.repro.run import dotted, failure_table, right_tool_counts


def _seed(t1: dict[str, float], bad: dict[str, int]) -> dict:
    return {"eval": {arm: {"metrics": {"t1.pass_rate": t1[arm]},
                           "edits": {"v2": {"bad": bad[arm], "cases": 4},
                                     "v3": {"bad": bad[arm], "cases": 4}}}
                     for arm in ARMS},
            "timings": {"base": 1.0}, "stages": {}}


@pytest.fixture
def results() -> dict:
    seeds = {"0": _seed({"base": 0.1, "fixed_sft": 0.8, "hsa_sft": 0.6, "hsa_opd": 0.5,
                         "hat": 0.7},
                        {"base": 4, "fixed_sft": 3, "hsa_sft": 2, "hsa_opd": 2, "hat": 1}),
             "1": _seed({"base": 0.1, "fixed_sft": 0.6, "hsa_sft": 0.6, "hsa_opd": 0.7,
                         "hat": 0.9},
                        {"base": 2, "fixed_sft": 2, "hsa_sft": 1, "hsa_opd": 1, "hat": 0})}
    return {"seeds": seeds, "wall_seconds": 10}


def test_mean_and_sample_std():
    mean, std = mean_std([1.0, 2.0, 3.0])
    assert mean == 2.0 and math.isclose(std, 1.0)
    assert mean_std([5.0]) == (5.0, None)
    assert cell([0.5], 100) == "50.0 (n=1)" and cell([], 100) == "—"
    assert cell([0.8, 0.6], 100) == f"70.0 ± {math.sqrt(200):.1f}"


def test_badcase_reduction_pools_edits_against_the_base(results):
    seed = results["seeds"]["0"]
    assert badcase_reduction(seed, "base") is None
    assert badcase_reduction(seed, "hat") == pytest.approx((8 / 8 - 2 / 8) / (8 / 8))
    assert arm_values(results, "hsa_sft", "badcase_reduction") == pytest.approx([0.5, 0.5])


def test_table_has_one_row_per_arm_and_every_column(results):
    table = markdown_table(results)
    lines = [x for x in table.splitlines() if x.startswith("| ")]
    assert len(lines) == 1 + len(ARMS)
    assert all(x.count("|") == len(COLUMNS) + 2 for x in lines)
    assert "| Fixed-Harness SFT | 70.0 ± 14.1 |" in table
    assert "| Base (no training) | 10.0 ± 0.0 |" in table


def test_the_plot_leaves_out_columns_no_arm_has_and_names_them(results, tmp_path):
    kept, missing = plotted_columns(results)
    assert [c[1] for c in kept] == ["t1.pass_rate", "badcase_reduction"]
    assert "Tool rob." in missing and len(kept) + len(missing) == len(COLUMNS)
    assert plot_bars(results, tmp_path / "bars.png").stat().st_size > 0  # two panels


def test_config_validation_lists_valid_keys(tmp_path):
    bad = tmp_path / "r.yaml"
    bad.write_text("seedz: [1]\neval: {episodez: 2, suites: [t9]}\nrender_profile: huge\n")
    with pytest.raises(ConfigError) as err:
        load_repro_config(bad)
    report = err.value.report()
    assert "seedz" in report and "episodez" in report and "t9" in report
    assert "base_size" in report and "compact" in report


def test_configs_in_examples_load(examples_dir):
    configs = examples_dir.parent / "configs"
    quick = load_repro_config(configs / "repro_quick.yaml", {"seeds": [3]})
    assert quick.seeds == (3,) and quick.base_size == "toy-test"
    full = load_repro_config(configs / "repro_full.yaml")
    assert full.base_size == "toy-long" and len(full.seeds) == 3
    assert full.render_profile == "compact"


def test_dotted_overrides():
    assert dotted({"a": 1, "probe": {"enabled": False, "x": {"y": 2}}}) == {
        "a": 1, "probe.enabled": False, "probe.x.y": 2}


def _sim(suite: str, passed: bool, failure: str | None = None, group: str = "") -> dict:
    return {"suite": suite, "group": group or None, "passed": passed, "failure_type": failure,
            "failures": [failure] if failure else []}


def _ifeval(ids: list[str], ok: list[bool]) -> dict:
    return {"suite": "ifeval", "instruction_id_list": ids, "strict_instructions": ok,
            "strict": all(ok)}


def test_failure_table_counts_failed_cases_by_type():
    rows = [_sim("t1", True), _sim("t1", False, "wrong_tool"), _sim("t1", False, "wrong_tool"),
            _sim("t2", False, "bad_args"), _sim("t2", False),
            _sim("edit", False, "wrong_tool", "v2"), _sim("edit", True, None, "v3"),
            _ifeval(["a", "b"], [True, False]), _ifeval(["b", "c"], [False, False]),
            _ifeval(["a"], [True])]
    assert failure_table(rows) == {
        "t1": {"wrong_tool": 2}, "t2": {"bad_args": 1, "error": 1},
        "edit:v2": {"wrong_tool": 1}, "ifeval": {"b": 2, "c": 1}}
    assert list(failure_table(rows)["t2"]) == ["bad_args", "error"]


def test_failure_types_sum_over_seeds_and_pool_edits(results):
    results["seeds"]["0"]["eval"]["hat"]["failures"] = {
        "t1": {"wrong_tool": 2}, "edit:v2": {"bad_args": 1}, "edit:v3": {"wrong_tool": 1}}
    results["seeds"]["1"]["eval"]["hat"]["failures"] = {"t1": {"wrong_tool": 1, "no_reply": 3}}
    assert failure_types(results, "hat", "t1") == {"no_reply": 3, "wrong_tool": 3}
    assert failure_types(results, "hat", "edit") == {"bad_args": 1, "wrong_tool": 1}
    assert failure_types(results, "base", "t1") == {}
    table = failures_markdown(results, top=1)
    assert "| HAT (HSA-SFT → OPD → HSA-RL) | no_reply 3, other 3 | — | bad_args 1, other 1 |" \
        in table
    assert len([x for x in table.splitlines() if x.startswith("| ")]) == 1 + len(ARMS)


def test_failures_table_is_left_out_for_results_without_case_rows(results):
    assert failures_markdown(results) == ""


def test_right_tool_counts_cases_without_a_wrong_tool():
    rows = [_sim("t1", True), _sim("t1", False, "wrong_arguments"), _sim("t1", False, "wrong_tool"),
            _sim("t2", False, "wrong_tool"), _sim("edit", False, "hallucinated_fact", "v2"),
            _ifeval(["a"], [False])]
    rows[2]["failures"] = ["wrong_tool", "hallucinated_fact"]
    assert right_tool_counts(rows) == {"t1": [2, 3], "t2": [0, 1], "edit:v2": [1, 1]}


def test_right_tool_reads_stored_counts_or_the_case_files(results, tmp_path):
    results["seeds"]["0"]["eval"]["hat"]["right_tool"] = {"t1": [3, 8], "edit:v2": [1, 4],
                                                          "edit:v3": [0, 4]}
    cases = tmp_path / "hat.cases.jsonl"
    cases.write_text("\n".join(json.dumps(r) for r in [_sim("t1", True),
                                                         _sim("t1", False, "wrong_tool")]))
    results["seeds"]["1"]["eval"]["hat"]["cases"] = [str(cases)]
    assert right_tool(results, "hat", "t1") == (4, 10)
    assert right_tool(results, "hat", "edit") == (1, 8)
    assert right_tool(results, "base", "t1") is None
    results["seeds"]["1"]["eval"]["fixed_sft"]["cases"] = [str(tmp_path / "gone.jsonl")]
    assert right_tool(results, "fixed_sft", "t1") is None
    table = right_tool_markdown(results)
    assert "| HAT (HSA-SFT → OPD → HSA-RL) | 4 / 10 | — | 1 / 8 |" in table
    assert "| Base (no training) | — | — | — |" in table
