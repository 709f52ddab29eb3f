"""Pairwise (A vs B) review statistics and the blinding of a review.

`pairwise_stats(wins, ties, losses)`: the win rate of A among decisive comparisons,
wins / (wins + losses), with a Wilson interval (statsmodels `proportion_confint`), and a
two-sided sign test (scipy `binomtest(wins, wins + losses, 0.5)`). Ties carry no information
about which system is better, so the sign test drops them (the classical treatment, Dixon and
Mood 1946); their share is reported beside the result, since 64 ties in 100 say something
about how much the systems differ at all.

`blind_pairs(items, rng)` shows each scenario's two responses as left/right in a random order
and returns the key separately; `unblind(votes, key, closed=...)` maps left/right votes back to
A/B and refuses while the review is open. Pure: storing reviews and their state is the caller's.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from hat_core.errors import ConfigError, Problem
from hat_core.evidence.errors import ReviewOpenError
from hat_core.evidence.lift import json_number

CHOICES = ("left", "right", "tie")


@dataclass(frozen=True)
class PairwiseResult:
    """Counts for A against B, A's win rate among decisive pairs, its CI and the sign test."""

    wins: int
    ties: int
    losses: int
    win_rate: float  # wins / (wins + losses); NaN when every pair is a tie
    ci_low: float
    ci_high: float
    p_value: float  # two-sided sign test, ties excluded
    alpha: float

    @property
    def decisive(self) -> int:
        return self.wins + self.losses

    @property
    def tie_share(self) -> float:
        total = self.wins + self.ties + self.losses
        return self.ties / total if total else float("nan")

    def to_dict(self) -> dict:
        data = {**asdict(self), "decisive": self.decisive, "tie_share": self.tie_share}
        return {k: json_number(v) for k, v in data.items()}


def pairwise_stats(wins: int, ties: int, losses: int, alpha: float = 0.05) -> PairwiseResult:
    """Win rate with a Wilson CI and the sign test (ties excluded) for A vs B."""
    if min(wins, ties, losses) < 0:
        raise ConfigError("negative counts", [Problem("counts", f"{wins}/{ties}/{losses}")])
    decisive = wins + losses
    if decisive == 0:
        nan = float("nan")
        return PairwiseResult(wins, ties, losses, nan, nan, nan, 1.0, alpha)
    low, high = proportion_confint(wins, decisive, alpha=alpha, method="wilson")
    p = binomtest(wins, decisive, 0.5, alternative="two-sided").pvalue
    return PairwiseResult(wins, ties, losses, wins / decisive, float(low), float(high),
                          float(p), alpha)


@dataclass(frozen=True)
class PairItem:
    """One scenario with system A's and system B's responses."""

    scenario_id: str
    a: str
    b: str


@dataclass(frozen=True)
class BlindPair:
    """What a reviewer sees: no system identities."""

    pair_id: str
    scenario_id: str
    left: str
    right: str


@dataclass(frozen=True)
class BlindKey:
    """pair_id -> the side ("left" or "right") that shows system A. Keep it from reviewers."""

    a_side: tuple[tuple[str, str], ...]

    def side_of_a(self, pair_id: str) -> str:
        return dict(self.a_side)[pair_id]

    def to_dict(self) -> dict:
        return dict(self.a_side)


def blind_pairs(items: Sequence[PairItem], rng: random.Random,
                ) -> tuple[list[BlindPair], BlindKey]:
    """The pairs to show (each order chosen by `rng`) and, separately, the key."""
    ids = [it.scenario_id for it in items]
    if len(set(ids)) != len(ids):
        raise ConfigError("duplicate scenario ids",
                          [Problem("items", "scenario_id must be unique")])
    pairs, key = [], []
    for i, it in enumerate(items):
        a_left = rng.random() < 0.5
        pair_id = f"pair-{i:04d}"
        left, right = (it.a, it.b) if a_left else (it.b, it.a)
        pairs.append(BlindPair(pair_id, it.scenario_id, left, right))
        key.append((pair_id, "left" if a_left else "right"))
    return pairs, BlindKey(tuple(key))


@dataclass(frozen=True)
class Unblinded:
    """One vote mapped back: `winner` is "a", "b" or "tie"."""

    pair_id: str
    winner: str


def unblind(votes: Mapping[str, str], key: BlindKey, *, closed: bool) -> list[Unblinded]:
    """Left/right/tie votes as A/B/tie; `ReviewOpenError` unless the review is `closed`."""
    if not closed:
        raise ReviewOpenError("the review is still open: close it before unblinding")
    known = dict(key.a_side)
    problems = [Problem(f"votes[{pid}]", "unknown pair") for pid in votes if pid not in known]
    problems += [Problem(f"votes[{pid}]", f"{v!r} is not one of {', '.join(CHOICES)}")
                 for pid, v in votes.items() if v not in CHOICES]
    if problems:
        raise ConfigError("invalid votes", problems)
    return [Unblinded(pid, "tie" if v == "tie" else ("a" if v == known[pid] else "b"))
            for pid, v in votes.items()]


def tally(unblinded: Sequence[Unblinded]) -> tuple[int, int, int]:
    """(wins of A, ties, losses of A), ready for `pairwise_stats`."""
    winners = [u.winner for u in unblinded]
    return winners.count("a"), winners.count("tie"), winners.count("b")
