"""Child processes that end with their parent: each in its own process group, told by the
kernel when the parent dies, and stopped (the whole group) when the parent stops.

    proc = spawn([sys.executable, "-m", "prefect", "server", "start"], stdout=log)
    try:
        ...
    finally:
        stop_group(proc)            # SIGTERM to the group, SIGKILL after the grace period

- `spawn` starts the child in a new session (its own process group, so Ctrl-C on a terminal
  reaches only the parent, which stops the child in order) and, on Linux, sets
  `PR_SET_PDEATHSIG` (prctl through ctypes; no library needed) so that the child gets SIGTERM
  even when the parent is SIGKILLed. The kernel sends it when the spawning *thread* ends, so
  it is set only for children spawned by the main thread.
- `raise_on_sigterm` makes SIGTERM raise `KeyboardInterrupt` in the main thread, so `finally`
  blocks (and `stop_group`) run on SIGTERM as on Ctrl-C; the stop is bounded
  (`stop_deadline`): a second SIGTERM ends the process at once, and it ends at the latest
  `HAT_STOP_DEADLINE_S` (60) s after the first.
- `ParentWatch` is for a process started by someone else's code (a Prefect runner's flow
  run): it SIGTERMs this process when its parent is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading

PR_SET_PDEATHSIG = 1
STOP_DEADLINE_ENV, STOP_DEADLINE_S = "HAT_STOP_DEADLINE_S", 60.0


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Ask the kernel to send `sig` to this process when its parent dies (Linux only);
    if the parent is already gone, send it now."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if parent == 1 or os.getppid() != parent:
        os.kill(os.getpid(), sig)


def spawn(command: list[str], **popen_kwargs) -> subprocess.Popen:
    """`subprocess.Popen(command)` in its own process group, ending with this process."""
    main = threading.current_thread() is threading.main_thread()
    return subprocess.Popen(command, start_new_session=True,
                            preexec_fn=die_with_parent if main else None, **popen_kwargs)


def stop_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM the child's process group, then SIGKILL it if it has not exited in `grace` s."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=grace)


def raise_on_sigterm() -> None:
    """From now on SIGTERM raises `KeyboardInterrupt` in the main thread (a no-op elsewhere),
    and bounds the stop that follows (`stop_deadline`)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum, frame) -> None:
    stop_deadline()
    raise KeyboardInterrupt(signal.Signals(signum).name)


def stop_deadline(default_s: float = STOP_DEADLINE_S) -> None:
    """Once a stop signal arrived: a second SIGTERM ends the process at once (the default
    action; main thread only), and the process ends at the latest `HAT_STOP_DEADLINE_S` s
    later (`default_s`; 0: no deadline), exit status 1, every thread's stack on stderr,
    however its shutdown is stuck: faulthandler's watchdog is a C thread that needs neither
    the GIL nor a Python frame, so it fires even while the interpreter finalizes or a drain
    of Prefect's services at exit waits on an API (a worker hung for 300 s that way)."""
    import faulthandler

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        seconds = float(os.environ.get(STOP_DEADLINE_ENV, default_s))
    except ValueError:
        seconds = default_s  # a signal handler must not fail: the stop goes on, bounded
    if seconds > 0:  # fd 2: a command's terminal may have replaced `sys.stderr`
        faulthandler.dump_traceback_later(seconds, exit=True, file=2)


class ParentWatch(threading.Thread):
    """Sends SIGTERM to this process once its parent `parent_pid` is gone (polled every
    `period` s: works whichever thread of the parent started this process)."""

    def __init__(self, parent_pid: int, period: float = 1.0):
        super().__init__(name="hat-parent-watch", daemon=True)
        self.parent_pid, self.period = parent_pid, period

    def run(self) -> None:
        while os.getppid() == self.parent_pid:
            threading.Event().wait(self.period)
        os.kill(os.getpid(), signal.SIGTERM)
