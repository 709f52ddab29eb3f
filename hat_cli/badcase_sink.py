"""The bad-case sink that writes to the SQL store (`db.badcases_repo.add_bad_case`).

It lives with the command line because hat_core imports nothing of `db`:

    sink = StoreBadCaseSink(open_store(), harness_version_id=7)
    evaluate(policy, harness, ["t1", "t2"], bad_cases=sink)

Each bad case is stored in its own transaction (state `new`, queued for review): its episode
(messages, turns, hook firings, scenario) plus `suite`, `case_id`, `variant_id` and the
variant's metadata; the judge's scores and failures as `judge_scores`. A variant's bad case
is filed under the harness version the variant was derived from.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from db.engine import in_transaction
from db.harness_repo import find_version_by_hash
from hat_cli.harness_args import is_version_ref, load_stored_version
from hat_core.errors import ConfigError
from hat_core.evaluation.badcases import BadCaseRecord
from hat_core.harness.model import Harness


class StoreBadCaseSink:
    """Adds every bad case to the store's review queue."""

    def __init__(self, sessions: sessionmaker[Session], *, harness_version_id: int,
                 model_version_id: int | None = None, actor: str = "hat eval"):
        self.sessions, self.actor = sessions, actor
        self.harness_version_id, self.model_version_id = harness_version_id, model_version_id
        self.ids: list[int] = []

    def add(self, record: BadCaseRecord) -> None:
        episode = record.episode | {"suite": record.suite, "case_id": record.case_id,
                                    "variant_id": record.variant_id,
                                    "metadata": record.metadata}
        stored = in_transaction(self.sessions, lambda s: _add(s, self, record, episode))
        self.ids.append(stored.id)

    def close(self) -> None:
        pass


def _add(session: Session, sink: StoreBadCaseSink, record: BadCaseRecord, episode: dict):
    from db.badcases_repo import add_bad_case

    return add_bad_case(session, episode=episode, harness_version_id=sink.harness_version_id,
                        failure_type=record.failure_type,
                        model_version_id=sink.model_version_id,
                        judge_scores=record.judge_scores, actor=sink.actor)


def stored_version_id(sessions: sessionmaker[Session], harness_arg: str,
                      harness: Harness) -> int:
    """The store id of the harness named on the command line: the version itself for `N` /
    `LINE:N`, else the stored version with the file's content hash."""
    if is_version_ref(harness_arg) and not Path(harness_arg).exists():
        return load_stored_version(harness_arg).id
    with sessions() as session:
        found = find_version_by_hash(session, line=harness.harness,
                                     content_hash=harness.content_hash())
    if found is None:
        raise ConfigError(f"{harness_arg} is not a stored harness version; bad cases are "
                          "filed under one: run `hat harness submit` first, or pass N / LINE:N")
    return found.id
