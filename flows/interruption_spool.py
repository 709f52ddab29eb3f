"""Interruptions the SQL store could not take when they happened, kept in a local spool under
the HAT home until the reconciler records them.

A job stopped from outside while its store is down (the outage may be why it stopped) cannot
mark itself `interrupted`: without the spool it stays `running` until its lease is stale,
and the reconciler then reports it as "lease lost". So the run retries the record a few
times (a bounded wait: a stopping process has seconds, not minutes), then writes one JSON
file per job (`$HAT_HOME/spool/interruptions/job-<id>.json`: owner, reason, time), and every
reconciler pass records the spooled interruptions, before it expires stale leases, and
removes the files. A file whose owner no longer holds its job (another run took it over)
is removed unrecorded; a file that does not read is renamed `*.bad` and named in the pass's
result. The spool is local: the flow runs and the reconciler of `hat serve` share the home.

    outcome = record_interruption(sessions, job, owner, cause, policy, spool_dir(home))
    applied = apply_spool(sessions, spool_dir(home), policy)    # in `resume_once`
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from db.engine import in_transaction
from db.flow_repo import interrupt_job
from db.job_retries import RetryPolicy
from db.jobs_repo import get_job
from db.models import utcnow
from db.values import Job
from flows.interruptions import mark_interrupted, unreachable
from hat_core.errors import NotFoundError

RECORDED, TAKEN, SPOOLED = "recorded", "taken-over", "spooled"
RECORD_WAITS = (0.5, 1.0, 2.0)  # seconds between tries before spooling: 3.5 s in all


def spool_dir(home: str | os.PathLike) -> Path:
    """The spool of a HAT home."""
    return Path(home).resolve() / "spool" / "interruptions"


@dataclass(frozen=True)
class SpoolPass:
    """What one pass over the spool did: the jobs it recorded `interrupted`, the files it
    dropped (their owner no longer held the job) and the files it could not read."""

    recorded: list[Job] = field(default_factory=list)
    dropped: list[Path] = field(default_factory=list)
    unreadable: list[Path] = field(default_factory=list)


def record_interruption(sessions: sessionmaker[Session], job: Job, owner: str, cause: str,
                        policy: RetryPolicy, spool: Path,
                        waits: Sequence[float] = RECORD_WAITS) -> str:
    """Mark the job `interrupted` (`recorded`), or find that another run holds it (`taken-
    over`), retrying a store that cannot be reached after each of `waits`; if it still
    cannot be reached, spool the interruption (`spooled`). Other errors raise."""
    for wait in (*waits, None):
        try:
            done = mark_interrupted(sessions, job, owner, cause, policy)
            return RECORDED if done is not None else TAKEN
        except Exception as exc:
            if unreachable(exc) is None:
                raise
            if wait is None:
                break
            time.sleep(wait)
    write_spooled(spool, job.id, owner, cause)
    return SPOOLED


def write_spooled(spool: Path, job_id: int, owner: str, cause: str,
                  at: datetime | None = None) -> Path:
    """Write (atomically) the spool file of job `job_id`; returns its path."""
    spool.mkdir(parents=True, exist_ok=True)
    path = spool / f"job-{job_id}.json"
    record = {"job_id": job_id, "owner": owner, "reason": cause,
              "at": (at or utcnow()).isoformat()}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, path)
    return path


def apply_spool(sessions: sessionmaker[Session], spool: Path | None,
                policy: RetryPolicy) -> SpoolPass:
    """Record every spooled interruption whose owner still holds its running job (due after
    the policy's backoff from the time it was spooled), and remove the files."""
    out = SpoolPass()
    if spool is None or not spool.is_dir():
        return out
    for path in sorted(spool.glob("job-*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            job_id, owner = int(record["job_id"]), str(record["owner"])
            reason, at = str(record["reason"]), datetime.fromisoformat(record["at"])
        except (OSError, ValueError, KeyError, TypeError):
            path.rename(path.with_suffix(".bad"))
            out.unreadable.append(path)
            continue
        job = in_transaction(sessions, lambda s, i=job_id, o=owner, r=reason, a=at: _record(
            s, i, o, r, a, policy))
        (out.recorded.append(job) if job is not None else out.dropped.append(path))
        path.unlink(missing_ok=True)
    return out


def _record(session: Session, job_id: int, owner: str, reason: str, at: datetime,
            policy: RetryPolicy) -> Job | None:
    try:
        job = get_job(session, job_id=job_id)
    except NotFoundError:
        return None
    return interrupt_job(session, job_id=job_id, owner=owner,
                         reason=f"{reason} (spooled while the store was down)"[:2000],
                         retry_at=policy.retry_at(job, now=at))
