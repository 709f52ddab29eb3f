"""Blind pairwise reviews for the console: create (from JSONL or two checkpoints), vote, close.

After closing, the unblinded rows.

Every action checks the role (`pairwise.manage` to create and close, `pairwise.vote` to vote)
and calls one `db.pairwise_repo` function; the store keeps the identities hidden while a
review is open. Rows for open reviews carry no system names by construction: they are built
from `PairwiseReview`, which has none.
"""

from __future__ import annotations

import random
import secrets

from sqlalchemy.orm import Session

from db.eval_runs import checkpoint_sources
from db.pairwise_repo import cast_vote, close_pairwise_review, create_pairwise_review
from db.values import PairwiseOutcome, PairwiseReview, PairwiseVote, User
from hat_core.errors import ConfigError, Problem
from hat_core.evidence.review_items import parse_review_items
from ui.auth import require

CHOICE_LABELS = {"left": "Left is better", "tie": "Tie", "right": "Right is better"}
PRODUCTION = "production baseline"


def parse_seed(text: str) -> int | None:
    """A blank seed means "draw one"; otherwise a non-negative integer."""
    if not text.strip():
        return None
    if not text.strip().isdigit():
        raise ConfigError("bad seed", [Problem("seed", f"{text!r} is not a whole number")])
    return int(text.strip())


def create_review(session: Session, *, user: User, title: str, system_a: str, system_b: str,
                  jsonl: str, source: str, seed: int | None = None,
                  model_version_a_id: int | None = None,
                  model_version_b_id: int | None = None) -> PairwiseReview:
    """Parse the JSONL items and open a blind review of A against B (operators, admins)."""
    require(user.role, "pairwise.manage")
    items = parse_review_items(jsonl, source)
    return create_pairwise_review(
        session, title=title, system_a=system_a, system_b=system_b, items=items,
        actor=user.name, seed=seed, model_version_a_id=model_version_a_id,
        model_version_b_id=model_version_b_id)


def create_review_from_checkpoints(
    session: Session, *, user: User, tracking_uri: str, title: str, checkpoint_a: int,
    checkpoint_b: int | None, limit: int | None = None, seed: int | None = None,
) -> PairwiseReview:
    """Open a blind review of checkpoint A against checkpoint B (None: the production baseline
    A's job evaluated beside it) on the t1/t2 cases both evaluations played (operators,
    admins). The seed samples `limit` items and blinds them (drawn when None; stored)."""
    from hat_core.evidence.review_from_runs import review_items_from_cases
    from hat_core.evidence.run_cases import load_run_cases

    require(user.role, "pairwise.manage")
    src_a, src_b = checkpoint_sources(session, checkpoint_a=checkpoint_a,
                                      checkpoint_b=checkpoint_b)
    if (src_a.run_id, src_a.artifact) == (src_b.run_id, src_b.artifact):
        raise ConfigError("system A and system B are the same checkpoint",
                          [Problem("System B", "pick another checkpoint or the baseline")])
    a, b = (load_run_cases(tracking_uri, s.run_id, s.artifact) for s in (src_a, src_b))
    seed = secrets.randbelow(2**31) if seed is None else seed
    items = review_items_from_cases(a.rows, b.rows, limit=limit, rng=random.Random(seed),
                                    source_a=f"{src_a.label} ({a.source})",
                                    source_b=f"{src_b.label} ({b.source})")
    return create_pairwise_review(
        session, title=title, system_a=src_a.label, system_b=src_b.label, items=items,
        actor=user.name, seed=seed, model_version_a_id=src_a.model_version_id,
        model_version_b_id=src_b.model_version_id)


def vote(session: Session, *, user: User, item_id: int, choice: str,
         comment: str) -> PairwiseVote:
    """The user's vote on one item (reviewers and above)."""
    require(user.role, "pairwise.vote")
    return cast_vote(session, item_id=item_id, reviewer=user.name, choice=choice,
                     comment=comment)


def close_review(session: Session, *, user: User, review_id: int) -> PairwiseReview:
    """Close a review (operators, admins): voting ends and the outcome may be unblinded."""
    require(user.role, "pairwise.manage")
    return close_pairwise_review(session, review_id=review_id, actor=user.name)


def review_rows(reviews: list[PairwiseReview]) -> list[dict]:
    """The review list: id, title, state, items, votes, who opened and closed it."""
    return [{"id": r.id, "title": r.title, "state": r.state, "items": r.n_items,
             "votes": r.n_votes, "created by": r.created_by,
             "created": f"{r.created_at:%Y-%m-%d %H:%M}", "closed by": r.closed_by}
            for r in reviews]


def outcome_rows(outcome: PairwiseOutcome) -> list[dict]:
    """A's wins, ties and losses with the win rate, its CI and the sign test, two ways."""
    rows = []
    for unit, res in (("every vote", outcome.by_vote), ("each item (majority)", outcome.by_item)):
        rows.append({
            "counted by": unit, "A wins": res.wins, "ties": res.ties, "B wins": res.losses,
            "A win rate": _pct(res.win_rate),
            f"{1 - res.alpha:.0%} CI (Wilson)": f"[{_pct(res.ci_low)}, {_pct(res.ci_high)}]",
            "sign test p": f"{res.p_value:.3g}", "tie share": _pct(res.tie_share)})
    return rows


def item_rows(outcome: PairwiseOutcome) -> list[dict]:
    """Per item after closing: where A was shown, the judge's verdict, the votes as systems."""
    names = {"a": "A", "b": "B", "tie": "tie", "": "-", None: "-"}
    return [{"#": it.position + 1, "scenario": it.scenario_id, "A shown": it.a_side,
             "judge": names[it.judge_choice], "votes": ", ".join(
                 f"{who}: {names[w]}" for who, w, _ in it.votes) or "-",
             "majority": names[it.winner],
             "comments": " | ".join(c for _, _, c in it.votes if c)} for it in outcome.items]


def first_unvoted(item_ids: list[int], voted: set[int]) -> int:
    """The index of the first item the reviewer has not voted on (0 when all are done)."""
    return next((n for n, i in enumerate(item_ids) if i not in voted), 0)


def _pct(x: float) -> str:
    return "-" if x != x else f"{x:.1%}"
