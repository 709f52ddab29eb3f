"""Pairwise review statistics and blinding, against hand computations."""

from __future__ import annotations

import math
import random

import pytest

from hat_core.errors import ConfigError
from hat_core.evidence.errors import ReviewOpenError
from hat_core.evidence.pairwise import (
    BlindPair,
    PairItem,
    blind_pairs,
    pairwise_stats,
    tally,
    unblind,
)


def wilson(wins: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval written out (Wilson 1927)."""
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_the_reports_blind_test_35_wins_64_ties_1_loss():
    r = pairwise_stats(35, 64, 1)
    assert r.decisive == 36 and r.win_rate == pytest.approx(35 / 36)
    assert (r.ci_low, r.ci_high) == pytest.approx(wilson(35, 36))
    assert (r.ci_low, r.ci_high) == pytest.approx((0.858303, 0.995080), abs=1e-6)
    # sign test, ties dropped: P(X >= 35 | n=36, 1/2) = (36 + 1) / 2^36, doubled
    assert r.p_value == pytest.approx(2 * 37 / 2**36)
    assert r.tie_share == pytest.approx(0.64)


def test_sign_test_and_wilson_on_a_balanced_case():
    r = pairwise_stats(10, 5, 10)
    assert r.p_value == pytest.approx(1.0)
    assert (r.ci_low, r.ci_high) == pytest.approx(wilson(10, 20))
    # 7 of 8: P(X >= 7) = (8 + 1) / 256, two-sided 18 / 256
    assert pairwise_stats(7, 0, 1).p_value == pytest.approx(18 / 256)


def test_all_ties_and_bad_counts():
    r = pairwise_stats(0, 12, 0)
    assert math.isnan(r.win_rate) and r.p_value == 1.0 and r.to_dict()["decisive"] == 0
    assert r.to_dict()["win_rate"] is None
    with pytest.raises(ConfigError):
        pairwise_stats(-1, 0, 3)


ITEMS = [PairItem(f"s{i}", f"A says {i}", f"B says {i}") for i in range(40)]


def test_blind_pairs_hide_identities_and_randomise_sides():
    pairs, key = blind_pairs(ITEMS, random.Random(0))
    assert all(isinstance(p, BlindPair) for p in pairs)
    assert not {"a", "b", "system", "key"} & set(BlindPair.__dataclass_fields__)
    a_left = sum(p.left.startswith("A") for p in pairs)
    assert 10 <= a_left <= 30  # both orders occur
    for p in pairs:
        assert {p.left, p.right} == {f"A says {p.scenario_id[1:]}", f"B says {p.scenario_id[1:]}"}
        assert key.side_of_a(p.pair_id) == ("left" if p.left.startswith("A") else "right")
    assert blind_pairs(ITEMS, random.Random(0)) == (pairs, key)  # seeded
    assert blind_pairs(ITEMS, random.Random(1))[1] != key


def test_unblind_refuses_while_the_review_is_open():
    pairs, key = blind_pairs(ITEMS[:3], random.Random(2))
    votes = {p.pair_id: "left" for p in pairs}
    with pytest.raises(ReviewOpenError, match="still open"):
        unblind(votes, key, closed=False)


def test_unblind_maps_votes_back_to_systems():
    pairs, key = blind_pairs(ITEMS[:6], random.Random(3))
    # the reviewer always prefers A's answer, and calls the last pair a tie
    votes = {p.pair_id: ("left" if p.left.startswith("A") else "right") for p in pairs[:5]}
    votes[pairs[5].pair_id] = "tie"
    result = unblind(votes, key, closed=True)
    assert [u.winner for u in result] == ["a"] * 5 + ["tie"]
    assert tally(result) == (5, 1, 0)
    assert pairwise_stats(*tally(result)).win_rate == 1.0


def test_unblind_lists_bad_votes():
    pairs, key = blind_pairs(ITEMS[:2], random.Random(4))
    with pytest.raises(ConfigError) as err:
        unblind({pairs[0].pair_id: "middle", "pair-9999": "left"}, key, closed=True)
    assert [p.path for p in err.value.problems] == ["votes[pair-9999]",
                                                    f"votes[{pairs[0].pair_id}]"]


def test_duplicate_scenarios_are_refused():
    with pytest.raises(ConfigError, match="duplicate scenario ids"):
        blind_pairs([ITEMS[0], ITEMS[0]], random.Random(0))
