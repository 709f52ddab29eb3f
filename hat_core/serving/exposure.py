"""Exposures: the record of one request the gateway answered, and the batched writer.

    log = ExposureLog(write=lambda batch: store(batch), batch_size=200, interval_s=0.2)
    log.submit(Exposure(...))     # never blocks: a deque append
    log.close()                   # writes what is left, then stops

`submit` appends to a deque (atomic, no lock, no wake-up: under load the request path pays
nothing for the writer); the writer thread wakes every `interval_s` (at once while a full
batch is waiting), takes up to `batch_size` and hands them to `write` in one call. A batch
`write` refuses stays at the head of the line and is tried again after a backoff, so a store
that is down for a while delays exposures but loses none; `close` keeps trying until its
timeout and says how many it could not write.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime


@dataclass(frozen=True)
class Exposure:
    """One request: experiment, user, arm, the model version served, how long, what status."""

    experiment_id: int
    user_id: str
    arm: str
    model_version: str
    model_version_id: int | None
    harness_version: str
    request_id: str
    latency_ms: float
    status: int
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))


class ExposureLog:
    """A queue of exposures and one thread that writes them in batches (see the module)."""

    def __init__(self, write: Callable[[list[Exposure]], None], *, batch_size: int = 200,
                 interval_s: float = 0.2, retry_s: float = 1.0,
                 on_error: Callable[[Exception], None] | None = None):
        self._write, self.batch_size, self.interval_s = write, batch_size, interval_s
        self.retry_s, self._on_error = retry_s, on_error or (lambda exc: None)
        self._queue: deque[Exposure] = deque()
        self._pending: list[Exposure] = []
        self._stop = threading.Event()
        self.written = 0
        self.failures = 0
        self._thread = threading.Thread(target=self._run, name="exposure-log", daemon=True)
        self._thread.start()

    def submit(self, exposure: Exposure) -> None:
        """Queue one exposure (returns at once)."""
        self._queue.append(exposure)

    @property
    def backlog(self) -> int:
        """Exposures queued or waiting for a retry, not yet written."""
        return len(self._queue) + len(self._pending)

    def _take(self) -> None:
        while len(self._pending) < self.batch_size:
            try:
                self._pending.append(self._queue.popleft())
            except IndexError:
                return

    def _flush(self) -> bool:
        if not self._pending:
            return True
        try:
            self._write(list(self._pending))
        except Exception as exc:  # noqa: BLE001  (any store failure: keep the rows, retry)
            self.failures += 1
            self._on_error(exc)
            return False
        self.written += len(self._pending)
        self._pending.clear()
        return True

    def _run(self) -> None:
        while not self._stop.is_set():
            if len(self._pending) + len(self._queue) < self.batch_size:
                self._stop.wait(self.interval_s)
            self._take()
            if not self._flush():
                self._stop.wait(self.retry_s)

    def flush(self, timeout_s: float = 10.0) -> int:
        """Wait until everything submitted so far is written; the number still unwritten."""
        deadline = time.monotonic() + timeout_s
        while self.backlog and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.backlog

    def close(self, timeout_s: float = 30.0) -> int:
        """Stop the thread after writing what is left; the number it could not write."""
        self._stop.set()
        self._thread.join(timeout=timeout_s)
        deadline = time.monotonic() + timeout_s
        while self.backlog and time.monotonic() < deadline:
            self._take()
            if not self._flush():
                time.sleep(min(self.retry_s, 0.2))
        return self.backlog
