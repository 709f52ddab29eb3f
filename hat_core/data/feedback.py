"""Reviewed bad cases sent back to training: each case's scenario replayed by the build's teacher.

    cases = [SentCase(id=17, episode=stored_episode), ...]   # read from the store by the caller
    fed = play_sent_cases(cases, surfaces, teacher, config)
    fed.trajectories, fed.skipped                             # skipped: `Skipped(id, reason)`

The caller (the CLI or the retrain flow) reads the store and passes plain episode dicts:
hat_core imports nothing of `db`. A stored bad case's episode holds its scenario
(`episode["scenario"]`, `Scenario.to_dict()`) and the world it was played in
(`episode["world"]`: the seed and size of its catalog, recorded by
`hat_core.evaluation.evaluate`). The failed answer itself is never trained on: the case is
replayed like a scenario of the bank, by the build's teacher, on `config.bad_case_copies`
training surfaces (the original harness, then training variants drawn by a seed of the case
id; at most 1 + `variants` surfaces), `best_of_n` samples each, kept by the build's rejection
thresholds, then the hook-retry policy. Its trajectories have `source="bad_case"` and the
scenario id `bc<id>-<scenario id>` (`case_id_of` reads the id back from a row), so each case
is split as one scenario of its own and never merged with a bank scenario of the same id.

A case whose scenario or world cannot be rebuilt (corrupt JSON, an episode filed before
worlds were recorded) or whose replay passes no rejection threshold (its kind no longer fits
the harness) is skipped with a reason that names its id; the build goes on.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from hat_core.data.config import DataConfig
from hat_core.data.rejection import select
from hat_core.data.retry_policy import apply_retry_policy
from hat_core.data.rollout import Rollout, Surface, play, trajectory_of
from hat_core.data.teacher import Teacher
from hat_core.data.trajectory import Trajectory
from hat_core.sim.catalog import Catalog, seeded_catalog
from hat_core.sim.scenarios import Scenario

SOURCE = "bad_case"
_SCENARIO_ID = re.compile(r"bc(\d+)-")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SentCase:
    """A reviewed bad case sent to training: its store id and its stored episode."""

    id: int
    episode: Mapping


@dataclass(frozen=True)
class Skipped:
    """A sent case that gave no trajectory, and why (the fix is in the reason)."""

    id: int
    reason: str

    def to_dict(self) -> dict:
        return {"id": self.id, "reason": self.reason}


@dataclass(frozen=True)
class Feedback:
    """The trajectories of the sent cases, the cases skipped, and the retry counts."""

    trajectories: tuple[Trajectory, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    retries: Mapping[str, int] | None = None


def case_id_of(scenario_id: str) -> int | None:
    """The bad-case id of a `bc<id>-...` scenario id (None for any other row)."""
    match = _SCENARIO_ID.match(scenario_id or "")
    return int(match[1]) if match else None


def rebuild(case: SentCase) -> tuple[Scenario, Catalog]:
    """The case's scenario (renamed `bc<id>-<id>`) and the catalog of its world; ValueError
    with an actionable reason when the stored episode cannot give them."""
    episode = case.episode if isinstance(case.episode, Mapping) else {}
    try:
        scenario = Scenario.from_dict(episode["scenario"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"its episode has no readable scenario ({type(exc).__name__}: "
                         f"{exc}); dismiss it, or file the case again from a new evaluation"
                         ) from exc
    world = episode.get("world")
    if not (isinstance(world, Mapping) and isinstance(world.get("seed"), (str, int))
            and isinstance(world.get("catalog_size"), int) and world["catalog_size"] >= 1):
        raise ValueError("its episode records no world (catalog seed and size; bad cases "
                         "filed before worlds were recorded lack it): run the evaluation "
                         "again (`hat eval run ... --store`) and send the new case instead")
    catalog = seeded_catalog(world["seed"], world["catalog_size"])
    if scenario.product_id is not None and catalog.product(scenario.product_id) is None:
        raise ValueError(f"product {scenario.product_id} is not in its world's catalog "
                         f"({world['seed']}): the recorded world is wrong")
    return replace(scenario, id=f"bc{case.id}-{scenario.id}"), catalog


def surfaces_for(case_id: int, surfaces: Sequence[Surface], copies: int,
                 seed: int) -> list[Surface]:
    """The original surface, then `copies - 1` training variants drawn by the case's seed."""
    if copies <= 0 or not surfaces:
        return []
    rest = list(surfaces[1:])
    rng = random.Random(f"bad-case:{seed}:{case_id}")
    return [surfaces[0], *rng.sample(rest, min(copies - 1, len(rest)))]


def play_sent_cases(cases: Sequence[SentCase], surfaces: Sequence[Surface], teacher: Teacher,
                    config: DataConfig) -> Feedback:
    """Replay every sent case (module doc); skipped ones are logged as warnings too."""
    if config.bad_case_copies <= 0:
        return Feedback()
    kept: list[Trajectory] = []
    skipped: list[Skipped] = []
    for case in sorted(cases, key=lambda c: c.id):
        try:
            kept += _play_case(case, surfaces, teacher, config)
        except ValueError as exc:
            skipped.append(Skipped(case.id, str(exc)))
            log.warning("bad case %s skipped: %s", case.id, exc)
    trajectories, retries = apply_retry_policy(kept, config.retry.full_retry_share, config.seed)
    return Feedback(tuple(trajectories), tuple(skipped), retries)


def _play_case(case: SentCase, surfaces: Sequence[Surface], teacher: Teacher,
               config: DataConfig) -> list[Trajectory]:
    scenario, catalog = rebuild(case)
    chosen = surfaces_for(case.id, surfaces, config.bad_case_copies, config.seed)
    rollouts: list[Rollout] = [play(su, scenario, catalog, teacher, k) for su in chosen
                               for k in range(config.rejection.best_of_n)]
    kept, rejected = select(rollouts, config.rejection)
    if not kept:
        why = ", ".join(sorted(k for k in rejected if k not in ("total", "best_of_n")))
        raise ValueError(f"replayed on {len(chosen)} surface(s), no trajectory passed "
                         f"rejection ({why}): its scenario no longer fits this harness "
                         "(a skill or tool it needs is gone?); dismiss it or send a newer case")
    scenario_dict = scenario.to_dict()
    return [replace(trajectory_of(r, teacher.name, scenario_dict), source=SOURCE)
            for r in kept]


def feedback_summary(rows_by_split: Mapping[str, Sequence[dict]], copies: int,
                     skipped: Sequence[Skipped]) -> dict:
    """The manifest's `bad_cases`: the ids with rows in the dataset, rows per split, skips."""
    splits = {s: sum(1 for r in rows if r.get("source") == SOURCE)
              for s, rows in rows_by_split.items()}
    ids = {case_id_of(r.get("scenario_id", "")) for rows in rows_by_split.values()
           for r in rows if r.get("source") == SOURCE}
    return {"ids": sorted(i for i in ids if i is not None), "rows": sum(splits.values()),
            "splits": splits, "copies": copies, "skipped": [s.to_dict() for s in skipped]}
