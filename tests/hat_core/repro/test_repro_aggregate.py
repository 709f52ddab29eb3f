"""Multi-seed aggregates against hand computations on a constructed case: the pooled rate and
its Wilson interval, mean ± sample std over seeds, McNemar on the discordant pairs pooled over
seeds, per-family pooling, and the markdown built from them."""

from __future__ import annotations

import math

import pytest

from hat_core.errors import ConfigError
from hat_core.evaluation.call_metrics import paired_difference_interval
from hat_core.repro.aggregate import (
    aggregates,
    mcnemar_exact,
    pooled_families,
    pooled_paired,
    pooled_rate,
)
from hat_core.repro.tables import aggregates_markdown, family_markdown, paired_markdown

Z = 1.959963984540054  # the normal quantile of 97.5%


def _wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval written out."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def _price(passed: int, exact: int) -> dict:
    return {"price": {"cases": 3, "passed": passed, "first_call_exact": exact}}


def _arm(t2: str, world: int, kinds: dict | None = None) -> dict:
    ids = [f"t2/h000/s{i:05d}" for i in range(len(t2))]
    return {"eval_seed": world, "outcomes": {"t2": {"case_ids": ids, "first_call_exact": t2}},
            "families": {"t1.kind": kinds or {}}}


@pytest.fixture
def results() -> dict:
    # seed 0: fixed 3/10, hat 5/10; seed 1: fixed 5/10, hat 9/10 (same cases within a seed)
    return {"seeds": {
        "0": {"eval_seed": 0, "eval": {
            "fixed_sft": _arm("1110000000", 0, _price(0, 1)),
            "hat": _arm("1011110000", 0, _price(1, 2))}},
        "1": {"eval_seed": 1, "eval": {
            "fixed_sft": _arm("1111100000", 1, _price(2, 3)),
            "hat": _arm("1111011111", 1, _price(2, 3))}}}}


def test_pooled_rate_and_its_wilson_interval(results):
    r = pooled_rate(results, "hat", "t2", "first_call_exact")
    assert (r.hits, r.cases) == (14, 20) and r.rate == 0.7
    assert r.interval == pytest.approx(_wilson(14, 20), abs=1e-9)
    assert r.per_seed == {"0": 0.5, "1": 0.9}
    assert r.mean == pytest.approx(0.7) and r.std == pytest.approx(math.sqrt(0.08))
    fixed = pooled_rate(results, "fixed_sft", "t2", "first_call_exact")
    assert (fixed.hits, fixed.cases) == (8, 20)
    assert fixed.interval == pytest.approx(_wilson(8, 20), abs=1e-9)
    assert fixed.interval == pytest.approx((0.2188, 0.6134), abs=1e-4)
    assert pooled_rate(results, "base", "t2", "first_call_exact") is None


def test_pooled_mcnemar_sums_the_discordant_pairs_of_every_seed(results):
    p = pooled_paired(results, "fixed_sft", "hat", "t2", "first_call_exact")
    # seed 0: fixed only at case 1; hat only at 3, 4, 5. seed 1: fixed only at 4; hat only
    # at 5..9. Pooled: a only 2, b only 8, both 6, neither 4.
    assert (p.a_only, p.b_only, p.both, p.neither) == (2, 8, 6, 4)
    assert p.cases == 20 and p.seeds == 2 and p.diff == pytest.approx(0.3)
    # exact two-sided: 2 * P(X <= 2), X ~ Binomial(10, 1/2) = 2 * (1 + 10 + 45) / 1024
    assert p.p_value == pytest.approx(2 * 56 / 1024)
    # Bonett-Price by hand: (8+1)/22 - (2+1)/22 = 6/22, half z * sqrt((12/22 - (6/22)^2)/22)
    half = Z * math.sqrt((12 / 22 - (6 / 22) ** 2) / 22)
    assert p.diff_interval == pytest.approx((6 / 22 - half, 6 / 22 + half), abs=1e-9)
    assert mcnemar_exact(1, 6) == pytest.approx(2 * 8 / 128)
    assert mcnemar_exact(0, 0) == 1.0
    # per seed alone neither is significant; the pooled count is what is tested
    assert p.p_value < mcnemar_exact(1, 3) and p.p_value < mcnemar_exact(1, 5)


def test_pairs_of_different_cases_are_refused(results):
    results["seeds"]["1"]["eval"]["hat"]["outcomes"]["t2"]["case_ids"][0] = "t2/h000/other"
    with pytest.raises(ConfigError) as err:
        pooled_paired(results, "fixed_sft", "hat", "t2", "first_call_exact")
    assert "seed 1" in str(err.value) and "t2" in str(err.value)


def test_families_pool_over_seeds_with_intervals(results):
    kinds = pooled_families(results, "hat", "t1.kind", "first_call_exact")
    assert list(kinds) == ["price"]
    price = kinds["price"]
    assert (price["hits"], price["cases"], price["rate"]) == (5, 6, 5 / 6)
    assert price["interval"] == pytest.approx(_wilson(5, 6), abs=1e-9)
    table = family_markdown(results, "t1.kind", "first_call_exact")
    assert "| price |" in table and "5/6 83.3" in table and "4/6 66.7" in table


def test_aggregates_and_markdown(results):
    agg = aggregates(results)
    assert agg["pooled"]["hat"]["t2.first_call_exact"]["hits"] == 14
    assert [(p["a"], p["b"]) for p in agg["paired"]] == [("fixed_sft", "hat")]
    assert "fixed_sft" in agg["families"] and "base" not in agg["families"]
    table = paired_markdown(results)
    assert "| T2 | exact first call | Fixed-Harness SFT → HAT" in table
    lo, hi = paired_difference_interval(8, 2, 20)
    assert (f"| 20 (2 seeds) | 40.0 | 70.0 | +30.0 ({100 * lo:+.1f} to {100 * hi:+.1f}) "
            "| 2 | 8 | 0.11 |") in table
    text = aggregates_markdown(results)
    assert "14/20 = 70.0" in text and "70.0 ± 28.3" in text
