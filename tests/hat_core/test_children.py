"""Child processes end with their parent (`hat_core.children`): on the parent's SIGKILL
(PR_SET_PDEATHSIG), with their whole process group on a stop, and SIGTERM runs `finally`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]
PARENT = f"""
import sys, time
from hat_core.children import spawn, raise_on_sigterm
raise_on_sigterm()
child = spawn({SLEEPER!r})
try:
    print(child.pid, flush=True)  # inside: a SIGTERM right after it lands in the try
    time.sleep(120)
finally:
    print("finally ran", flush=True)
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux")


def start_parent() -> tuple[subprocess.Popen, int]:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return parent, int(parent.stdout.readline())


def gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.1)
    return False


def test_a_child_ends_when_its_parent_is_killed():
    parent, child = start_parent()
    assert psutil.Process(child).ppid() == parent.pid
    assert os.getpgid(child) == child            # its own process group
    parent.kill()
    parent.wait()
    assert gone(child), "the child outlived its SIGKILLed parent"


def test_sigterm_runs_finally_in_the_parent():
    parent, child = start_parent()
    parent.send_signal(signal.SIGTERM)
    out, _ = parent.communicate(timeout=30)
    assert "finally ran" in out
    assert gone(child)


def test_stop_group_ends_the_whole_group():
    from hat_core.children import spawn, stop_group

    shell = spawn(["sh", "-c", f"{' '.join(SLEEPER[:2])} 'import time; time.sleep(120)' & "
                               "wait"])
    time.sleep(1.0)
    grandchildren = [p.pid for p in psutil.Process(shell.pid).children(recursive=True)]
    assert grandchildren
    stop_group(shell, grace=5)
    assert all(gone(pid) for pid in grandchildren)


WATCHED = """
import os, time
from hat_core.children import ParentWatch
ParentWatch(os.getppid(), period=0.2).start()
print(os.getpid(), flush=True)
time.sleep(120)
"""


def test_a_watched_process_ends_when_its_parent_is_gone():
    """A flow run started by someone else's code (Prefect's runner) watches its parent."""
    middle = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys, time; "
         f"subprocess.Popen([sys.executable, '-c', {WATCHED!r}]); time.sleep(120)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    watched = int(middle.stdout.readline())
    middle.kill()
    middle.wait()
    assert gone(watched), "the watched process outlived its parent"


STUCK = """
import threading, time
from hat_core.children import raise_on_sigterm
raise_on_sigterm()

def drain():  # a drain at interpreter exit that never ends and outlives signals
    while True:
        try:
            time.sleep(0.2)
        except KeyboardInterrupt:
            pass

threading._register_atexit(drain)   # where Prefect's services drain at exit
print("exiting", flush=True)
"""


def start_stuck(deadline_s: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", STUCK], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT),
                                 "HAT_STOP_DEADLINE_S": str(deadline_s)})
    assert proc.stdout.readline() == "exiting\n"
    time.sleep(0.5)                                # in the drain now
    return proc


def test_a_stop_stuck_in_the_exit_drain_ends_at_the_deadline():
    """A SIGTERM during a drain at exit that never ends (a worker hung 300 s that way):
    the process ends at the stop deadline, exit 1, with the stack of the stuck drain."""
    proc = start_stuck(deadline_s=3)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - started
    assert proc.returncode == 1
    assert 2.5 <= took < 30
    assert "Timeout (0:00:03)!" in err and "in drain" in err


def test_a_second_sigterm_ends_a_stuck_stop_at_once():
    proc = start_stuck(deadline_s=0)                 # no deadline: only the signal ends it
    proc.send_signal(signal.SIGTERM)
    time.sleep(1.0)
    assert proc.poll() is None                       # still stuck after the first
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGTERM
    assert time.monotonic() - started < 5
