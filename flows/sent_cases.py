"""The store side of bad cases sent to training: read them for a data build, then record the
build that consumed them (`db.badcases_repo.training_cases`, `mark_consumed`).

    cases = read_sent_cases(sessions, harness_version_id=7)           # plain {"id", "episode"}
    result = build(harness, config, out, bad_cases=sent_cases(cases))
    record_consumed(sessions, result.manifest)                        # the ids it lists

The retrain flow's data step and `hat data build --harness N` both go through here, so
hat_core sees plain episode dicts and never the store. Only a ready dataset consumes cases,
and only those with rows in it (the manifest's `bad_cases.ids`): a skipped case stays
unconsumed, for a later build once it is fixed or dismissed.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session, sessionmaker

from db.badcases_repo import mark_consumed, training_cases
from db.engine import in_transaction
from hat_core.data.feedback import SentCase


def read_sent_cases(sessions: sessionmaker[Session], *, harness_version_id: int,
                    job_id: int | None = None) -> list[dict]:
    """The cases a build for this version takes, as `{"id", "episode"}` dicts."""
    with sessions() as s:
        cases = training_cases(s, harness_version_id=harness_version_id, job_id=job_id)
    return [{"id": c.id, "episode": c.episode} for c in cases]


def sent_cases(cases: Sequence[dict]) -> list[SentCase]:
    """`read_sent_cases`' dicts as hat_core's `SentCase`s."""
    return [SentCase(int(c["id"]), c["episode"]) for c in cases]


def record_consumed(sessions: sessionmaker[Session], manifest: dict, *,
                    job_id: int | None = None, actor: str = "data build") -> list[int]:
    """Mark the cases a ready dataset took (`manifest["bad_cases"]["ids"]`) as consumed by
    its version; the ids marked now."""
    ids = list((manifest.get("bad_cases") or {}).get("ids") or [])
    if manifest.get("status") != "ready" or not ids:
        return []
    return in_transaction(sessions, lambda s: mark_consumed(
        s, bad_case_ids=ids, build=manifest["version"], job_id=job_id, actor=actor))
