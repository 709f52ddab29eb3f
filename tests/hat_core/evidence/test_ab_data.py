"""Validation and loading of A/B files: every problem named by column and line."""

from __future__ import annotations

import pandas as pd
import pytest

from hat_core.errors import ConfigError
from hat_core.evidence.ab_data import validate_ab_frame
from hat_core.evidence.errors import AbDataError
from hat_core.evidence.loader import load_ab, write_table
from hat_core.evidence.simulate import METRICS, simulate_ab


def small() -> pd.DataFrame:
    return pd.DataFrame({"user_id": ["a", "a", "b", "b", "c", "d"],
                         "arm": ["control", "control", "treatment", "treatment", "control",
                                 "treatment"],
                         "day": ["1", "2", "1", "2", "1", "1"],
                         "gmv": ["1.5", "0", "2", "3", "0", "4"],
                         "gmv_pre": ["1", "1", "2", "2", "0", "3"]})


def problems_of(frame: pd.DataFrame, **kwargs) -> list[str]:
    with pytest.raises(AbDataError) as err:
        validate_ab_frame(frame, **kwargs)
    assert isinstance(err.value, ConfigError)
    return [str(p) for p in err.value.problems]


def test_valid_frame_parses_metrics_and_covariates():
    data = validate_ab_frame(small())
    assert data.metrics == ("gmv",)
    assert data.covariates == {"gmv": "gmv_pre"}
    users = data.per_user()
    assert users.loc["a", "gmv"] == 1.5 and users.loc["b", "gmv"] == 5.0  # summed over days
    assert users.loc["b", "gmv_pre"] == 2.0  # a covariate is per user, not summed
    assert data.days() == ["1", "2"]


def test_numeric_day_labels_sort_as_numbers():
    frame = small()
    frame.loc[1, "day"] = "10"
    frame.loc[3, "day"] = "10"
    assert validate_ab_frame(frame).days() == ["1", "10"]
    frame["day"] = frame["day"].map({"1": "2", "10": "10"})
    assert validate_ab_frame(frame).days() == ["2", "10"]


def test_missing_columns_are_each_named():
    found = problems_of(small().drop(columns=["arm", "day"]))
    assert found[0].startswith("arm: missing column (the file has: user_id, gmv, gmv_pre)")
    assert found[1].startswith("day: missing column")


def test_unknown_metric_is_named():
    assert problems_of(small(), metrics=["gmv", "views"]) == [
        "views: unknown metric (the file has: user_id, arm, day, gmv, gmv_pre)"]


def test_unknown_arm_names_the_first_line_and_the_valid_labels():
    frame = small()
    frame.loc[4, "arm"] = "treatmnet"
    found = problems_of(frame)
    assert found[0] == ("line 6, column arm: unknown arm 'treatmnet' (1 rows; expected "
                        "'control' or 'treatment', see --control/--treatment)")


def test_custom_arm_labels():
    frame = small()
    frame["arm"] = frame["arm"].map({"control": "react", "treatment": "harness"})
    data = validate_ab_frame(frame, control="react", treatment="harness")
    assert (data.control, data.treatment) == ("react", "harness")
    assert "unknown arm 'react'" in problems_of(frame)[0]


def test_text_and_empty_values_in_a_metric_name_line_and_column():
    frame = small()
    frame.loc[2, "gmv"] = "12,5 yuan"
    frame.loc[3, "gmv"] = ""
    frame.loc[5, "gmv"] = "inf"
    assert problems_of(frame) == [
        "line 4, column gmv: '12,5 yuan' is not a finite number",
        "line 5, column gmv: empty value",
        "line 7, column gmv: 'inf' is not a finite number"]


def test_many_bad_rows_are_counted_not_listed():
    frame = pd.concat([small()] * 4, ignore_index=True)
    frame["day"] = [str(i) for i in range(len(frame))]
    frame["gmv"] = "x"
    frame["gmv_pre"] = "1"
    found = problems_of(frame)
    assert len(found) == 6 and found[-1] == "column gmv: ... and 19 more rows"


def test_duplicate_user_day_rows_point_at_both_lines():
    frame = pd.concat([small(), small().iloc[[2]]], ignore_index=True)
    assert problems_of(frame) == [
        "line 8: duplicate row for user 'b' day '1' (first at line 4)"]


def test_user_in_both_arms_and_varying_covariate():
    frame = small()
    frame.loc[1, "arm"] = "treatment"
    frame.loc[3, "gmv_pre"] = "5"
    found = problems_of(frame)
    assert "user a: appears in both arms" in found
    assert "user b, column gmv_pre: a pre-period covariate must be the same on every day" in found


def test_an_arm_needs_two_users():
    frame = small()[small()["user_id"] != "d"]
    assert problems_of(frame) == ["arm: arm 'treatment' has 1 users (at least 2 needed)"]


def test_csv_and_parquet_load_the_same(tmp_path):
    frame = simulate_ab(3, n_control=30, n_treatment=20, days=2)
    csv = load_ab(write_table(frame, tmp_path / "ab.csv"))
    pq = load_ab(write_table(frame, tmp_path / "ab.parquet"))
    assert csv.metrics == pq.metrics == METRICS
    pd.testing.assert_frame_equal(csv.per_user(), pq.per_user())


def test_parquet_rows_are_numbered_from_zero(tmp_path):
    frame = small()
    frame.loc[0, "arm"] = "other"
    with pytest.raises(AbDataError) as err:
        load_ab(write_table(frame, tmp_path / "ab.parquet"))
    assert str(err.value.problems[0]).startswith("row 0, column arm: unknown arm 'other'")


def test_unreadable_and_unknown_files(tmp_path):
    with pytest.raises(AbDataError, match="no such file"):
        load_ab(tmp_path / "nope.csv")
    (tmp_path / "ab.xlsx").write_text("x")
    with pytest.raises(AbDataError, match="unknown format"):
        load_ab(tmp_path / "ab.xlsx")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(AbDataError, match="cannot read"):
        load_ab(tmp_path / "empty.csv")
    (tmp_path / "header.csv").write_text("user_id,arm,day,gmv\n")
    with pytest.raises(AbDataError) as err:
        load_ab(tmp_path / "header.csv")
    assert [str(p) for p in err.value.problems] == ["the file has no rows"]
