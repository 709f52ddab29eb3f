"""Paired comparison of two models on the same cases: McNemar's exact test and a bootstrap
interval of the difference, against hand computations; runs over other cases are refused."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hat_cli.main import app
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.paired import (
    case_reward,
    compare_cases,
    compare_rewards,
    parse_weights,
    read_case_rows,
)

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


def reward_rows(accuracies: list[float], penalty: float = 0.0) -> list[dict]:
    return [{"case_id": f"t1/c{i}", "suite": "t1",
             "rewards": {"accuracy": acc, "effectiveness": 0.5, "tool_rationality": 1.0,
                         "skill_selection": 1.0, "cot_length_penalty": penalty}}
            for i, acc in enumerate(accuracies)]


def test_a_case_reward_is_the_weighted_sum_with_the_penalty_subtracted():
    row = reward_rows([1.0], penalty=0.25)[0]
    assert case_reward(row) == pytest.approx(1.0 + 0.5 + 1.0 + 1.0 - 0.25)
    assert case_reward(row, "reward.effectiveness") == 0.5
    weights = {"accuracy": 2.0, "cot_length_penalty": 1.0}
    assert case_reward(row, weights=weights) == pytest.approx(2.0 - 0.25)
    assert parse_weights("accuracy=2, cot_length_penalty=1") == weights
    assert parse_weights("") is None
    with pytest.raises(EvalInputError, match="NAME one of accuracy"):
        parse_weights("speed=1")
    with pytest.raises(EvalInputError, match="'x' is not a number"):
        parse_weights("accuracy=x")


def test_mean_rewards_paired_with_wilcoxon_against_hand_computations():
    from scipy.stats import wilcoxon

    a = reward_rows([0.0] * 10 + [1.0] * 10)
    b = reward_rows([1.0] * 8 + [0.0] * 2 + [1.0] * 10, penalty=0.1)
    c = compare_rewards(a, b)
    diffs = [0.9] * 8 + [-0.1] * 12
    assert c.n == 20 and (c.a_better, c.b_better) == (12, 8)
    assert c.diff == pytest.approx(sum(diffs) / 20)
    assert c.p_value == pytest.approx(wilcoxon(diffs, zero_method="pratt").pvalue)
    assert c.diff_interval[0] < c.diff < c.diff_interval[1]
    assert c.a_interval[0] <= c.a <= c.a_interval[1]
    # one component alone: b ahead on accuracy in 8 cases, behind in none
    acc = compare_rewards(a, b, metric="reward.accuracy")
    assert (acc.a_better, acc.b_better) == (0, 8) and acc.diff == pytest.approx(0.4)
    same = compare_rewards(a, a)
    assert same.diff == 0 and same.p_value == 1.0
    with pytest.raises(EvalInputError, match="unknown reward 'reward.speed'"):
        compare_rewards(a, b, metric="reward.speed")
    with pytest.raises(EvalInputError, match="1 only in the second"):
        compare_rewards(a, b + reward_rows([0.0] * 21)[20:])


def two_runs(tmp_path: Path, suites: str) -> CliRunner:
    """`hat eval run` of the oracle (`oracle.json`) and of a memorised v1 (`mem.json`) on 15
    scenarios and 2 variants; the runner, for the comparisons."""
    hat = CliRunner()
    for name, model in (("oracle", "oracle"), ("mem", f"memorising:{V1}")):
        result = hat.invoke(app, ["eval", "run", model, "--suites", suites, "--harness",
                                  str(V1), "--episodes", "15", "--variants", "2", "--out",
                                  str(tmp_path / f"{name}.json")])
        assert result.exit_code == 0, result.output
    return hat


def test_hat_eval_compare_pairs_two_real_runs(tmp_path):
    """The oracle against the oracle of a memorised v1: equal on T1, the oracle ahead on
    the held-out variants, every discordant pair its way."""
    hat = two_runs(tmp_path, "t1,t2")
    out = tmp_path / "cmp.json"
    result = hat.invoke(app, ["eval", "compare", str(tmp_path / "mem.json"),
                              str(tmp_path / "oracle.json"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    found = {(c["suite"], c["metric"]): c for c in json.loads(out.read_text())}
    t1, t2 = found[("t1", "passed")], found[("t2", "passed")]
    result = hat.invoke(app, ["eval", "compare", str(tmp_path / "mem.json"),
                              str(tmp_path / "oracle.json"), "--metrics", "reward",
                              "--suites", "t2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    reward = json.loads(out.read_text())[0]
    assert reward["test"] == "wilcoxon-signed-rank" and reward["b"] > reward["a"]
    assert reward["diff_interval"][0] > 0 and reward["p_value"] < 0.05
    assert t1["n"] == 15 and t1["diff"] == 0 and t1["p_value"] == 1.0
    assert t2["n"] == 30 and t2["a_only"] == 0 and t2["b_only"] > 0 and t2["b"] == 1.0
    assert len(read_case_rows(tmp_path / "oracle.json")) == 15 + 30
    broken = tmp_path / "broken.cases.jsonl"
    broken.write_text('{"case_id": "x"\n')
    result = hat.invoke(app, ["eval", "compare", str(broken), str(tmp_path / "oracle.json")])
    assert result.exit_code == 2
    assert "broken.cases.jsonl:1" in result.output and "not JSON" in result.output


def kind_rows(outcomes: list[bool], kinds: list[str], suite: str = "t1") -> list[dict]:
    return [dict(r, kind=k) for r, k in zip(rows(outcomes, suite), kinds, strict=True)]


def test_by_kind_every_kind_one_case_is_mcnemar():
    """With one case per kind the kinds' sign-flip test is McNemar's exact test, and the
    design effect is 1 (no kind holds two cases to move together)."""
    from hat_core.evaluation.paired import sign_flip_p

    a = [True] * 5 + [False] * 8 + [True] + [False] * 6
    b = [True] * 5 + [True] * 8 + [False] + [False] * 6
    kinds = [f"k{i}" for i in range(20)]
    plain = compare_cases(rows(a), rows(b), metric="passed")
    by_kind = compare_cases(kind_rows(a, kinds), kind_rows(b, kinds), metric="passed",
                            cluster="kind")
    assert by_kind.p_value == pytest.approx(plain.p_value, abs=1e-12)
    assert (by_kind.clusters, by_kind.design_effect) == (20, 1.0)
    assert by_kind.test == plain.test == "mcnemar-exact"
    no_kind = compare_cases(rows(a), rows(b), metric="passed", cluster="kind")
    assert (no_kind.p_value, no_kind.clusters, no_kind.test) == (by_kind.p_value, 20,
                                                                 "mcnemar-exact")
    assert sign_flip_p([1] * 13 + [-1] * 4) == pytest.approx(2 * sum(
        math.comb(17, i) for i in range(5)) / 2 ** 17)


def test_by_kind_a_gain_from_few_kinds_is_not_significant():
    """12 cases gained, all in two kinds of six cases each: by case McNemar finds it
    (p = 2 / 2^12); by kind only two signs can flip, so p = 2 / 4 = 0.5. The design effect
    by hand: kinds' squared deviations (6 - 3)^2 twice and 0.25 twelve times, times 14/13,
    over 24 * 0.25 * 24/23."""
    kinds = ["price"] * 6 + ["stock"] * 6 + [f"k{i}" for i in range(12)]
    a = [False] * 12 + [True, False] * 6
    b = [True] * 12 + [True, False] * 6
    plain = compare_cases(rows(a, "t1"), rows(b, "t1"), metric="passed")
    by_kind = compare_cases(kind_rows(a, kinds), kind_rows(b, kinds), metric="passed",
                            cluster="kind")
    assert plain.p_value == pytest.approx(2 / 2 ** 12)
    assert by_kind.p_value == pytest.approx(0.5)
    assert by_kind.clusters == 14 and by_kind.test == "sign-flip-exact by kind"
    assert by_kind.design_effect == pytest.approx((9 + 9 + 12 * 0.25) * 14 / 13
                                                  / (24 * 0.25 * 24 / 23))
    assert (by_kind.a_only, by_kind.b_only, by_kind.diff) == (0, 12, plain.diff)
    assert by_kind.a_interval[1] - by_kind.a_interval[0] > plain.a_interval[1] - plain.a_interval[0]


def test_by_kind_exact_p_by_enumeration():
    """The sign-flip p against enumerating every sign pattern of the kinds' net gains."""
    from itertools import product

    from hat_core.evaluation.paired import sign_flip_p

    totals = [3, 4, 2, -1, 0, 2]
    live = [t for t in totals if t]
    observed = abs(sum(totals))
    hits = sum(abs(sum(s * t for s, t in zip(signs, live, strict=True))) >= observed
               for signs in product((1, -1), repeat=len(live)))
    assert sign_flip_p(totals) == pytest.approx(hits / 2 ** len(live))
    assert sign_flip_p([]) == 1.0 and sign_flip_p([0, 0]) == 1.0


def test_by_kind_one_kind_says_nothing_of_others():
    kinds = ["bundle"] * 12
    c = compare_cases(kind_rows([False] * 12, kinds), kind_rows([True] * 12, kinds),
                      metric="passed", cluster="kind")
    assert c.p_value == 1.0 and c.diff_interval == (-1.0, 1.0) and c.clusters == 1


def test_hat_eval_compare_by_kind(tmp_path):
    """`--by kind` on two real runs: the same counts as by case, the kinds as the units
    (the oracle against a memorised v1 on T2 gains cases in only some kinds)."""
    hat = two_runs(tmp_path, "t2")
    found = {}
    for by in ("case", "kind"):
        out = tmp_path / f"{by}.json"
        result = hat.invoke(app, ["eval", "compare", str(tmp_path / "mem.json"),
                                  str(tmp_path / "oracle.json"), "--suites", "t2",
                                  "--metrics", "passed", "--by", by, "--out", str(out)])
        assert result.exit_code == 0, result.output
        found[by] = json.loads(out.read_text())[0]
    case, kind = found["case"], found["kind"]
    assert (kind["n"], kind["a_only"], kind["b_only"]) == (case["n"], case["a_only"],
                                                            case["b_only"])
    kinds = {r["kind"] for r in read_case_rows(tmp_path / "oracle.json")}
    assert kind["clusters"] == len(kinds) < case["clusters"] == case["n"]
    assert kind["p_value"] > case["p_value"] and kind["design_effect"] >= 1.0
    assert "kinds as the units" in result.output
    result = hat.invoke(app, ["eval", "compare", str(tmp_path / "mem.json"),
                              str(tmp_path / "oracle.json"), "--by", "variant"])
    assert result.exit_code == 2 and "--by 'variant'" in result.output
