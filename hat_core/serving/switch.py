"""Following the slot: when a promotion or rollback changes what the arms serve, switch.

    follower = SlotFollower(table, read=lambda: {"control": target_a, "treatment": target_b},
                            open_backend=lambda target: LocalBackend(download(target)))
    follower.refresh()        # once now (raises when the first load fails)
    follower.start()          # then every `interval_s` seconds in a thread

`read()` says what each arm should serve (None: nothing). The treatment arm with no
challenger serves the champion (its exposures then name the champion's version, so an
analysis sees an A/A period for what it is). New backends load in the follower's thread
while the old table keeps answering; then the table switches in one step. Backends are kept
by model version (the newest `cache_size`), so a rollback to a version served a moment ago
switches at once; a kept backend with a `recheck()` (a pool of servers) is asked first
whether a server still holds the version.

`refresh_now()` is the gateway's call when an arm's backend stops answering: a blue-green
switch may have stopped the old server before the poll saw the promotion. It refreshes at
once, unless a refresh ran within `min_gap_s` (so a burst of failing requests reads the store
once), and never raises.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping

from hat_core.serving.arms import ArmTable, ArmTarget, ChatBackend, Route
from hat_core.serving.assignment import CONTROL, TREATMENT

Targets = Mapping[str, ArmTarget | None]


def effective_targets(targets: Targets) -> dict[str, ArmTarget]:
    """What each arm serves: the treatment falls back to the control's model."""
    control = targets.get(CONTROL)
    if control is None:
        return {}
    return {CONTROL: control, TREATMENT: targets.get(TREATMENT) or control}


class SlotFollower:
    """Polls `read` and switches `table` when the targets change (see the module)."""

    def __init__(self, table: ArmTable, *, read: Callable[[], Targets],
                 open_backend: Callable[[ArmTarget], ChatBackend], interval_s: float = 1.0,
                 cache_size: int = 4, on_error: Callable[[Exception], None] | None = None,
                 on_switch: Callable[[dict[str, str]], None] | None = None):
        self.table, self._read, self._open = table, read, open_backend
        self.interval_s, self.cache_size = interval_s, cache_size
        self._on_error = on_error or (lambda exc: None)
        self._on_switch = on_switch or (lambda labels: None)
        self._backends: OrderedDict[ArmTarget, ChatBackend] = OrderedDict()
        self._current: dict[str, ArmTarget] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # the poll thread and `refresh_now` callers
        self._last = float("-inf")  # monotonic time the last refresh started

    def refresh(self) -> bool:
        """Read the targets once; switch when they changed. True when it switched."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> bool:
        self._last = time.monotonic()
        targets = effective_targets(self._read())
        if targets == self._current:
            return False
        routes = {arm: Route(arm, t, self._backend(t)) for arm, t in targets.items()}
        self.table.switch(routes)
        self._current = targets
        self._on_switch(self.table.labels())
        return True

    def refresh_now(self, min_gap_s: float = 0.25) -> bool:
        """Refresh at once unless one started within `min_gap_s` (callers that waited for
        a refresh under way then see its table); errors go to `on_error`. True when it
        switched."""
        with self._lock:
            if time.monotonic() - self._last < min_gap_s:
                return False
            try:
                return self._refresh()
            except Exception as exc:  # noqa: BLE001  (store or registry down: keep serving)
                self._on_error(exc)
                return False

    def backends(self) -> list[ChatBackend]:
        """The backends kept now (the arms' and the recently served versions')."""
        return list(self._backends.values())

    def _backend(self, target: ArmTarget) -> ChatBackend:
        if target in self._backends:
            self._backends.move_to_end(target)
            recheck = getattr(self._backends[target], "recheck", None)
            if recheck is not None:  # a pool of servers: does one still hold the version?
                recheck()
        else:
            self._backends[target] = self._open(target)
            while len(self._backends) > self.cache_size:
                self._backends.popitem(last=False)  # requests under way keep their reference
        return self._backends[target]

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.refresh()
            except Exception as exc:  # noqa: BLE001  (store or registry down: keep serving)
                self._on_error(exc)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="slot-follower", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
