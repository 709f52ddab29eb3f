"""Paired comparison of two models on the same cases: McNemar's exact test and a bootstrap
interval of the difference, against hand computations; runs over other cases are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hat_cli.main import app
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.paired import compare_cases, read_case_rows

V1 = Path(__file__).resolve().parents[3] / "examples" / "harnesses" / "v1.yaml"


def rows(outcomes: list[bool], suite: str = "t2") -> list[dict]:
    return [{"case_id": f"{suite}/c{i}", "suite": suite, "passed": ok,
             "calls": {"first_tool_right": ok, "first_call_exact": ok,
                       "all_calls_exact": False}} for i, ok in enumerate(outcomes)]


def test_mcnemar_and_the_difference_on_a_constructed_pair():
    # 20 cases: both right on 5, only b on 8, only a on 1, neither on 6
    a = [True] * 5 + [False] * 8 + [True] + [False] * 6
    b = [True] * 5 + [True] * 8 + [False] + [False] * 6
    c = compare_cases(rows(a), rows(b), metric="first_call_exact")
    assert (c.n, c.a_only, c.b_only) == (20, 1, 8)
    assert (c.a, c.b) == (6 / 20, 13 / 20) and c.diff == pytest.approx(7 / 20)
    # exact McNemar: two-sided binomial on 9 discordant pairs, 1 of them for a
    assert c.p_value == pytest.approx(2 * (1 + 9) / 2 ** 9)
    low, high = c.diff_interval
    assert low < c.diff < high and low > 0  # 7 of 9 discordant pairs go one way
    assert c.a_interval[0] < c.a < c.a_interval[1]


def test_no_discordant_pair_is_no_evidence():
    c = compare_cases(rows([True, False] * 10), rows([True, False] * 10), metric="passed")
    assert c.diff == 0 and c.p_value == 1.0 and c.diff_interval == (0.0, 0.0)


def test_runs_over_other_cases_or_an_unknown_metric_are_refused():
    with pytest.raises(EvalInputError, match="1 only in the first, 0 only in the second"):
        compare_cases(rows([True, True, False]), rows([True, True]))
    with pytest.raises(EvalInputError, match="unknown metric"):
        compare_cases(rows([True]), rows([True]), metric="accuracy")
    with pytest.raises(EvalInputError, match="same cases of t1"):
        compare_cases(rows([True]), rows([True]), suite="t1")


def test_hat_eval_compare_pairs_two_real_runs(tmp_path):
    """The oracle against the oracle of a memorised v1: equal on T1, the oracle ahead on
    the held-out variants, every discordant pair its way."""
    hat = CliRunner()
    for name, model in (("oracle", "oracle"), ("mem", f"memorising:{V1}")):
        result = hat.invoke(app, ["eval", "run", model, "--suites", "t1,t2", "--harness",
                                  str(V1), "--episodes", "15", "--variants", "2", "--out",
                                  str(tmp_path / f"{name}.json")])
        assert result.exit_code == 0, result.output
    out = tmp_path / "cmp.json"
    result = hat.invoke(app, ["eval", "compare", str(tmp_path / "mem.json"),
                              str(tmp_path / "oracle.json"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    found = {(c["suite"], c["metric"]): c for c in json.loads(out.read_text())}
    t1, t2 = found[("t1", "passed")], found[("t2", "passed")]
    assert t1["n"] == 15 and t1["diff"] == 0 and t1["p_value"] == 1.0
    assert t2["n"] == 30 and t2["a_only"] == 0 and t2["b_only"] > 0 and t2["b"] == 1.0
    assert len(read_case_rows(tmp_path / "oracle.json")) == 15 + 30
    broken = tmp_path / "broken.cases.jsonl"
    broken.write_text('{"case_id": "x"\n')
    result = hat.invoke(app, ["eval", "compare", str(broken), str(tmp_path / "oracle.json")])
    assert result.exit_code == 2
    assert "broken.cases.jsonl:1" in result.output and "not JSON" in result.output
