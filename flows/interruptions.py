"""What stops a retrain job from outside, as opposed to a failure of the job itself, and
the job's lease.

An interruption (SIGTERM or SIGINT, Prefect's `TerminationSignal`, a lost lease, a store or
API that cannot be reached) leaves the job `interrupted` with the stage it reached, and the
reconciler resumes it after a backoff (`db.job_retries`); anything else (bad data, a refused
gate, a bug) is the job's own failure and stays `failed` until an operator retries it.

    with JobLease(sessions, job_id, owner, lease_s) as lease:
        ...                      # the heartbeat renews the lease; a lost lease raises
                                 # LeaseLost in this thread (not the whole process)
    cause = interruption_cause(exc, lease)   # None: the job itself failed
"""

from __future__ import annotations

import os
import signal
import threading
from datetime import timedelta

from sqlalchemy.orm import Session, sessionmaker

from db.engine import in_transaction
from db.flow_repo import heartbeat_job, interrupt_job
from db.job_retries import RetryPolicy
from db.values import Job

PARENT_PID = "HATOPS_SERVE_PID"  # set by `hat serve` for the flow-run processes it starts


def watch_parent() -> None:
    """In a flow-run process that `hat serve` started: SIGTERM this process when the service
    is gone (killed), so that the run records its job as interrupted and nothing runs on
    orphaned."""
    from hat_core.children import ParentWatch

    if os.environ.get(PARENT_PID) == str(os.getppid()):
        ParentWatch(os.getppid()).start()


class LeaseLost(BaseException):  # noqa: N818 - an event, not an error of the job
    """Another run holds this job now: this run stops without touching it. A
    `BaseException`, as `KeyboardInterrupt`: no `except Exception` in the job's code (or a
    task's retries) swallows it, and Prefect records the task and flow run as crashed."""


def interruption_cause(exc: BaseException, lease: JobLease | None = None) -> str | None:
    """Why the job was interrupted from outside, or None when it failed by itself."""
    from prefect.exceptions import TerminationSignal

    if isinstance(exc, LeaseLost) or (lease is not None and lease.lost.is_set()):
        return "lease lost: another run holds the job"
    if isinstance(exc, TerminationSignal):
        return f"stopped by {signal.Signals(exc.signal).name}"
    if isinstance(exc, KeyboardInterrupt):  # `hat_core.children.raise_on_sigterm` names it
        return f"stopped by {exc.args[0] if exc.args else 'SIGINT'}"
    if isinstance(exc, SystemExit):
        return f"stopped: exit {exc.code}"
    down = unreachable(exc)
    if down is not None:
        return f"service unreachable: {type(down).__name__}: {down}"[:500]
    return None


def unreachable(exc: BaseException) -> BaseException | None:
    """The error in `exc`'s chain (itself, its cause or context) saying a service could not
    be reached, or None: MLflow wraps a refused connection in an `MlflowException`, and a
    store error may surface through the code that handled it."""
    import httpx
    import requests
    from sqlalchemy.exc import OperationalError

    kinds = (httpx.TransportError, ConnectionError, OperationalError,
             requests.ConnectionError, requests.Timeout)
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kinds):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def mark_interrupted(sessions: sessionmaker[Session], job: Job, owner: str, cause: str,
                     policy: RetryPolicy) -> Job | None:
    """Record the interruption (None when another run took the job over meanwhile)."""
    return in_transaction(sessions, lambda s: interrupt_job(
        s, job_id=job.id, owner=owner, reason=cause, retry_at=policy.retry_at(job)))


class JobLease:
    """Renews the job's lease every quarter lease in a thread while the body runs. When the
    store says another run holds the job, it sets `lost` and raises `LeaseLost` in the
    thread that entered the lease (the flow's), and only there: the rest of the process (a
    test runner, the service's threads) goes on. The exception is delivered when that thread
    next runs Python code, so a training loop stops at once, and a thread blocked in one long
    C call (a sleep, a socket read) stops when the call returns. A store that cannot be
    reached is retried on the next beat (the lease outlasts short outages)."""

    def __init__(self, sessions: sessionmaker[Session], job_id: int, owner: str,
                 lease_s: float, on_error=print):
        self.sessions, self.job_id, self.owner = sessions, job_id, owner
        self.period = timedelta(seconds=lease_s / 4).total_seconds()
        self.lost, self._stop, self.on_error = threading.Event(), threading.Event(), on_error
        self._lock, self._body = threading.Lock(), 0
        self._thread = threading.Thread(target=self._beat, name=f"lease-{job_id}", daemon=True)

    def __enter__(self) -> JobLease:
        self._body = threading.get_ident()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:  # the body has ended: nothing is raised into its thread any more
            self._stop.set()
            if self.lost.is_set():
                _raise_in(self._body, None)  # withdraw one not delivered yet
        self._thread.join(timeout=5)

    def stop(self) -> None:
        """Renew no more: the body is about to end the job itself (succeeded or failed).
        Once the store holds the job's end, a beat would read "not held" and raise
        `LeaseLost` into the body's last steps (closing the MLflow run). A loss found
        before this call still reaches the body: it ran without the job."""
        with self._lock:
            self._stop.set()

    def _beat(self) -> None:
        while not self._stop.wait(self.period):
            try:
                held = in_transaction(self.sessions, lambda s: heartbeat_job(
                    s, job_id=self.job_id, owner=self.owner))
            except Exception as exc:  # noqa: BLE001 - the store may be down for a while
                self.on_error(f"lease of job {self.job_id}: heartbeat failed: {exc}")
                continue
            if not held:
                with self._lock:
                    self.lost.set()
                    if not self._stop.is_set():  # the body still runs: stop it
                        _raise_in(self._body, LeaseLost)
                return


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Raise `exc` in thread `thread_id` when it next runs Python code (None: withdraw a
    pending one): CPython's `PyThreadState_SetAsyncExc`."""
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None)
