"""Call-level metrics: constructed cases with one thing wrong each, and the intervals by hand."""

from __future__ import annotations

import json
import math

import pytest

from hat_core.evaluation.call_metrics import (
    bootstrap_share,
    call_metrics,
    case_calls,
    exact_call,
    paired_difference_interval,
    wilson,
)
from hat_core.evaluation.suites.qa import T1Suite, T2Suite
from hat_core.harness.io import load_harness
from hat_core.sim.batch import world
from hat_core.sim.binding import bind
from hat_core.sim.episode import CallRecord, episode_from_messages
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy
from hat_core.sim.runner import run_episode
from hat_core.sim.scenarios import ExpectedCall
from hat_core.sim.scoring import score_episode

V1 = load_harness("examples/harnesses/v1.yaml")


def _scenario(kind: str, where=lambda sc: True):
    catalog, scenarios = world(0, 150)
    return catalog, next(s for s in scenarios if s.kind == kind and where(s))


def _episode_with_first_call(kind: str, name: str, args: dict, where=lambda sc: True):
    """The oracle's episode of a `kind` scenario with its first call replaced."""
    catalog, sc = _scenario(kind, where)
    oracle = run_episode(V1, sc, catalog, OraclePolicy())
    messages = [dict(m) for m in oracle.messages]
    first = next(m for m in messages if m.get("tool_calls"))
    call = dict(first["tool_calls"][0])
    call["function"] = {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}
    first["tool_calls"] = [call, *first["tool_calls"][1:]]
    episode = episode_from_messages(messages, bind(V1), scenario_id=sc.id)
    return sc, episode, score_episode(episode, sc, V1)


def test_the_oracle_is_exact_on_every_metric():
    catalog, scenarios = world(0, 30)
    for sc in scenarios:
        ep = run_episode(V1, sc, catalog, OraclePolicy())
        c = case_calls(sc, ep, score_episode(ep, sc, V1))
        assert c.first_tool_right and c.first_call_exact and c.all_calls_exact, sc.id
        assert c.facts_stated == c.facts


def test_right_tool_with_a_wrong_argument_is_not_exact():
    _, sc = _scenario("shipping")
    good = sc.turns[0].required[0].args
    sc, ep, scores = _episode_with_first_call("shipping", "estimate_shipping",
                                              {**good, "city": "拉萨"})
    c = case_calls(sc, ep, scores)
    assert c.first_tool_right and not c.first_call_exact and not c.all_calls_exact


def test_an_extra_or_rejected_argument_makes_a_call_inexact():
    want = ExpectedCall("stock.check", {"product_id": "P1001"})

    def call(args, error=None):
        return CallRecord("check_stock", "stock.check", args, error is None, error, {})

    assert exact_call(want, call({"product_id": "P1001"}))
    assert not exact_call(want, call({"product_id": "P1001", "sku": "XL"}))
    assert not exact_call(want, call({"product_id": "P1001"}, "bad_arguments"))
    assert exact_call(ExpectedCall("x", {"n": 2}), CallRecord("x", "x", {"n": 2.0}, True, None,
                                                              {}))


def test_a_wrong_tool_is_neither_right_nor_exact():
    _, sc = _scenario("price")
    sc, ep, scores = _episode_with_first_call("price", "list_coupons",
                                              {"product_id": sc.product_id})
    c = case_calls(sc, ep, scores)
    assert not c.first_tool_right and not c.first_call_exact


def test_an_unknown_tool_name_is_not_right():
    _, sc = _scenario("price")
    sc, ep, scores = _episode_with_first_call("price", "query_price",
                                              {"product_id": sc.product_id})
    assert not case_calls(sc, ep, scores).first_tool_right


def test_a_call_where_none_is_needed_is_not_right():
    catalog, sc = _scenario("comment")
    assert not sc.turns[0].required
    messages = [{"role": "system", "content": "x"}, {"role": "user", "content": sc.turns[0].user},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c0", "type": "function",
                     "function": {"name": "get_live_promotions", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c0", "content": "{}"},
                {"role": "assistant", "content": "谢谢宝宝"}]
    ep = episode_from_messages(messages, bind(V1), scenario_id=sc.id)
    c = case_calls(sc, ep, score_episode(ep, sc, V1))
    assert c.needs_call is False and not c.first_tool_right and not c.first_call_exact


def test_the_memorising_policy_keeps_t1_and_loses_renamed_tools_on_t2():
    memo = MemorisingPolicy(V1)
    t1 = T1Suite().run(memo, V1, episodes=30, seed=0)
    t2 = T2Suite().run(memo, V1, episodes=30, variants=4, seed=0, t1_pass_rate=1.0)
    assert t1.metrics["first_call_exact"] == 1.0
    assert t2.metrics["first_tool_right"] < 0.9
    assert set(t2.summary["variants"]) == {"h000", "h001", "h002", "h003"}
    assert set(t1.summary["by_kind"]) >= {"price", "comment", "shipping"}


def test_wilson_matches_the_formula():
    z = 1.959963984540054
    for k, n in ((0, 8), (6, 24), (27, 30), (30, 30)):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        assert wilson(k, n) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert wilson(0, 0) == (0.0, 1.0)


def test_bootstrap_interval_holds_the_pooled_share_and_narrows_with_cases():
    few = [(1, 2), (2, 2), (0, 1), (1, 1)]
    lo, hi = bootstrap_share(few)
    assert lo <= 4 / 6 <= hi
    many_lo, many_hi = bootstrap_share(few * 25)
    assert many_hi - many_lo < hi - lo
    assert bootstrap_share([(3, 3)] * 5) == (1.0, 1.0)


def test_call_metrics_counts_cases_and_pools_facts():
    rows = [{"needs_call": True, "first_tool_right": True, "first_call_exact": False,
             "all_calls_exact": False, "facts": 2, "facts_stated": 1},
            {"needs_call": False, "first_tool_right": True, "first_call_exact": True,
             "all_calls_exact": True, "facts": 0, "facts_stated": 0},
            {"needs_call": True, "first_tool_right": False, "first_call_exact": False,
             "all_calls_exact": False, "facts": 1, "facts_stated": 1}]
    metrics, intervals = call_metrics(rows)
    assert metrics == {"first_tool_right": 2 / 3, "first_call_exact": 1 / 3,
                       "all_calls_exact": 1 / 3, "fact_accuracy": 2 / 3}
    assert intervals["first_tool_right"] == pytest.approx(list(wilson(2, 3)))


def test_paired_difference_interval_against_a_hand_computation():
    # Bonett-Price: 5 of 45 cases only b got right, 1 only a: p_b = 6/47, p_a = 2/47
    pb, pa = 6 / 47, 2 / 47
    half = 1.959964 * math.sqrt((pb + pa - (pb - pa) ** 2) / 47)
    low, high = paired_difference_interval(5, 1, 45)
    assert low == pytest.approx(pb - pa - half, abs=1e-6)
    assert high == pytest.approx(pb - pa + half, abs=1e-6)
    # no discordant case still leaves an interval around 0 (a bootstrap would give (0, 0))
    low, high = paired_difference_interval(0, 0, 45)
    assert low == pytest.approx(-high) and 0.05 < high < 0.07
    assert paired_difference_interval(0, 0, 0) == (-1.0, 1.0)
    assert paired_difference_interval(0, 100, 100)[0] == -1.0  # clipped to [-1, 1]


def test_design_effect_of_cases_that_move_together():
    """All-or-none kinds raise it; one case per kind, or no clusters, leave it at 1; one kind
    of several cases is one independent outcome."""
    from hat_core.evaluation.call_metrics import design_effect, wilson

    together = [1.0] * 3 + [0.0] * 3 + [1.0] * 3 + [0.0] * 3
    kinds = ["a"] * 3 + ["b"] * 3 + ["c"] * 3 + ["d"] * 3
    deff, k = design_effect(together, kinds)
    # kinds' deviations (3 - 1.5)^2 four times, times 4/3, over 12 * 0.25 * 12/11
    assert k == 4 and deff == pytest.approx(4 * 2.25 * 4 / 3 / (12 * 0.25 * 12 / 11))
    mixed = [1.0, 0.0, 1.0] * 4   # every kind the same share: nothing moves together
    assert design_effect(mixed, kinds) == (1.0, 4)
    assert design_effect(together, list(range(12))) == (1.0, 12)
    assert design_effect(together, None) == (1.0, 12)
    assert design_effect(together, ["x"] * 12) == (12.0, 1)
    assert wilson(6, 12, design_effect=3.0) == pytest.approx(wilson(2, 4))
