"""The reconciler: every stored harness version gets its retrain run, even when the change
event was lost (Prefect's `emit_event` drops events while the server is down).

It claims pending outbox rows (the store's `claim_outbox_events`; a claim older than
`stale_after` is taken again, so a reconciler that died loses nothing), starts the
`retrain/harness-change` deployment for each with the job's idempotency key (a repeat call
returns the same flow run), and marks the row done. The job row's uniqueness makes a run
that also came from the event trigger harmless: it exits "already handled".

    started = reconcile_once(sessions, submit_to_deployment)   # `hat serve --reconcile-once`
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy.orm import Session, sessionmaker

from db.engine import in_transaction
from db.outbox_repo import claim_outbox_events, mark_outbox_done
from db.values import ChangeEvent
from flows.retrain import FLOW_NAME, job_key

DEPLOYMENT = "harness-change"
DEPLOYMENT_NAME = f"{FLOW_NAME}/{DEPLOYMENT}"
Submit = Callable[[ChangeEvent], str]


def submit_to_deployment(event: ChangeEvent) -> str:
    """Start (or find) the retrain run of the event's version; returns the flow run id."""
    from prefect.deployments import run_deployment

    line, number = event.payload["line"], int(event.payload["number"])
    run = run_deployment(
        name=DEPLOYMENT_NAME, parameters={"harness_version": number, "line": line},
        idempotency_key=job_key(line, number), timeout=0, as_subflow=False)
    return str(run.id)


def reconcile_once(
    sessions: sessionmaker[Session],
    submit: Submit = submit_to_deployment,
    *,
    limit: int = 50,
    stale_after: timedelta = timedelta(minutes=10),
) -> dict[int, str]:
    """Claim pending change events, submit each, mark it done; returns event id -> run id.
    An event whose submit raises stays claimed and is retried after `stale_after`."""
    events = in_transaction(
        sessions, lambda s: claim_outbox_events(s, limit=limit, stale_after=stale_after))
    started: dict[int, str] = {}
    for event in events:
        started[event.id] = submit(event)
        in_transaction(sessions, lambda s, i=event.id: mark_outbox_done(s, event_ids=[i]))
    return started


class ReconcilerLoop(threading.Thread):
    """`reconcile_once` every `interval` seconds until `stop()`; errors are reported through
    `on_error` and the loop goes on (the events stay pending)."""

    def __init__(self, sessions: sessionmaker[Session], interval: float = 5.0,
                 submit: Submit = submit_to_deployment,
                 on_error: Callable[[Exception], None] = print):
        super().__init__(name="hat-reconciler", daemon=True)
        self.sessions, self.interval, self.submit = sessions, interval, submit
        self.on_error, self._halt = on_error, threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                reconcile_once(self.sessions, self.submit)
            except Exception as exc:  # noqa: BLE001 - a loop that must survive outages
                self.on_error(exc)
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
