"""The Great Expectations suite, run for real on flattened rows; leakage really detected."""

from __future__ import annotations

import copy
import json
import shutil

import pytest
from datasets import DatasetDict, load_from_disk

from hat_core.data.config import ValidationConfig
from hat_core.data.manifest import read_manifest
from hat_core.data.splits import HeldOut
from hat_core.data.validate import ValidationContext, validate_dir, validate_rows


@pytest.fixture(scope="module")
def rows(built) -> list[dict]:
    data = load_from_disk(str(built.out / "dataset"))
    return [r for split in ("train", "validation", "test") for r in data[split].to_list()]


@pytest.fixture(scope="module")
def ctx(built, harness) -> ValidationContext:
    heldout = HeldOut.from_dict(json.loads((built.out / "heldout.json").read_text()))
    return ValidationContext(heldout, tuple(s.id for s in harness.skills),
                             frozenset(t.name for t in harness.tools), ValidationConfig())


def _failed(report) -> set[str]:
    return {c.column for c in report.failed}


def _train_row(rows: list[dict], with_calls: bool = True) -> int:
    return next(i for i, r in enumerate(rows) if r["split"] == "train"
                and any(m["tool_calls"] for m in r["messages"]) == with_calls)


def test_the_built_dataset_passes_a_real_gx_run(built, rows, ctx):
    report = validate_rows(rows, ctx)
    assert report.success, report.markdown()
    gx = report.gx_result
    assert gx["statistics"]["evaluated_expectations"] == len(report.checks) >= 15
    assert {r["expectation_config"]["type"] for r in gx["results"]} >= {
        "expect_column_values_to_be_in_set", "expect_column_values_to_be_between",
        "expect_column_proportion_of_unique_values_to_be_between"}
    assert built.report.success and (built.out / "validation" / "report.md").is_file()


def test_a_leaked_heldout_product_fails_validation(rows, ctx):
    product = sorted(ctx.heldout.products)[0]
    bad = copy.deepcopy(rows)
    i = _train_row(bad)
    bad[i]["messages"][1]["content"] += f" 顺便问下{product}呢？"
    report = validate_rows(bad, ctx)
    assert _failed(report) == {"leak_product"}
    check = report.failed[0]
    assert check.observed == f"1 of {len(rows)} unexpected"
    assert any(bad[i]["scenario_id"] in o for o in check.offending)
    assert "no held-out product outside test" in report.markdown()


def test_a_heldout_product_inside_test_is_fine(rows, ctx):
    product = sorted(ctx.heldout.products)[0]
    ok = copy.deepcopy(rows)
    i = next(i for i, r in enumerate(ok) if r["split"] == "test")
    ok[i]["messages"][1]["content"] += f" {product}"
    assert validate_rows(ok, ctx).success


def test_a_leaked_heldout_scenario_fails_validation(rows, ctx):
    bad = copy.deepcopy(rows)
    bad[_train_row(bad)]["scenario_id"] = sorted(ctx.heldout.scenarios)[0]
    assert _failed(validate_rows(bad, ctx)) == {"leak_scenario"}


def test_a_heldout_pool_name_in_train_fails_validation(rows, ctx):
    bad = copy.deepcopy(rows)
    row = bad[_train_row(bad)]
    tools = json.loads(row["tools"])
    old = next(c["function"]["name"] for m in row["messages"] for c in m["tool_calls"] or ())
    new = "OBTAIN_TARIFF"  # held-out case style and held-out words
    for t in tools:
        if t["function"]["name"] == old:
            t["function"]["name"] = new
    row["tools"] = json.dumps(tools, ensure_ascii=False)
    for m in row["messages"]:
        for c in m["tool_calls"] or ():
            if c["function"]["name"] == old:
                c["function"]["name"] = new
    assert _failed(validate_rows(bad, ctx)) == {"leak_pool"}


@pytest.mark.parametrize("arguments", ['{"product_id": ', '{"product_id": 7}', '"P1001"'])
def test_bad_tool_calls_fail_validation(rows, ctx, arguments):
    bad = copy.deepcopy(rows)
    row = bad[_train_row(bad)]
    call = next(c for m in row["messages"] for c in m["tool_calls"] or ())
    call["function"]["arguments"] = arguments
    assert _failed(validate_rows(bad, ctx)) == {"tool_calls_valid"}


def test_an_unknown_tool_fails_validation(rows, ctx):
    bad = copy.deepcopy(rows)
    row = bad[_train_row(bad)]
    next(c for m in row["messages"] for c in m["tool_calls"] or ())["function"]["name"] = "nope"
    assert _failed(validate_rows(bad, ctx)) == {"tool_calls_valid"}


def test_empty_assistant_turns_fail_validation(rows, ctx):
    bad = copy.deepcopy(rows)
    bad[_train_row(bad, with_calls=False)]["messages"][-1]["content"] = "  "
    assert _failed(validate_rows(bad, ctx)) == {"assistant_nonempty", "ends_with_reply"}


def test_duplicates_over_the_rate_fail_validation(rows, ctx):
    n = int(len(rows) * 0.1)
    report = validate_rows(rows + copy.deepcopy(rows[:n]), ctx)
    assert _failed(report) == {"content_key"}


def test_length_and_schema_bounds(rows, ctx):
    bad = copy.deepcopy(rows)
    bad[0]["messages"] = bad[0]["messages"][:1]
    bad[1]["split"] = "holdout"
    failed = _failed(validate_rows(bad, ctx))
    assert {"schema_ok", "n_messages", "split"} <= failed


def test_validate_dir_marks_a_tampered_dataset_failed(built, tmp_path):
    copy_dir = tmp_path / "ds"
    shutil.copytree(built.out, copy_dir)
    heldout = json.loads((copy_dir / "heldout.json").read_text())
    data = load_from_disk(str(built.out / "dataset"))
    train = data["train"].to_list()
    train[0]["product_id"] = heldout["products"][0]
    tampered = DatasetDict({**data, "train": data["train"].from_list(train)})
    shutil.rmtree(copy_dir / "dataset")
    tampered.save_to_disk(str(copy_dir / "dataset"))
    report = validate_dir(copy_dir)
    assert not report.success and _failed(report) == {"leak_product"}
    assert read_manifest(copy_dir)["status"] == "failed"
    assert "FAILED" in (copy_dir / "validation" / "report.md").read_text()


def test_tools_that_are_no_built_surface_fail_validation(built, rows, ctx):
    from dataclasses import replace

    strict = replace(ctx, surfaces=built.manifest["surfaces"])
    assert len(strict.surfaces) == 3  # the original and two variants
    assert validate_rows(rows, strict).success
    bad = copy.deepcopy(rows)
    tools = json.loads(bad[0]["tools"])
    tools[0]["function"]["description"] = "查询任意信息"
    bad[0]["tools"] = json.dumps(tools, ensure_ascii=False)
    assert _failed(validate_rows(bad, strict)) == {"surface_known"}
