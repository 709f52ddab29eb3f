"""Nothing outlives a `hat` command: the local Prefect server that `hat demo` and `hat retrain`
start ends when the command gets SIGTERM (issue #22 item 5) or SIGKILL. Slow: marked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
HAT = "from hat_cli.main import app; app()"


def hat(args: list[str], tmp: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PREFECT_API", "HAT_PREFECT", "PREFECT_RESULTS"))}
    env.update(HAT_HOME=str(tmp / ".hat"), PREFECT_HOME=str(tmp / "prefect"),
               HAT_CACHE_DIR=str(tmp / "cache"))
    env.pop("HAT_DATABASE_URL", None)
    env.pop("HAT_MLFLOW_TRACKING_URI", None)
    return subprocess.Popen([sys.executable, "-c", HAT, *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def prefect_server_of(proc: subprocess.Popen, timeout: float = 240) -> psutil.Process:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the command ended first ({proc.returncode})"
        for child in psutil.Process(proc.pid).children(recursive=True):
            try:
                if "server" in child.cmdline() and "prefect" in " ".join(child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.5)
    raise AssertionError("no Prefect server child appeared")


def gone(process: psutil.Process, timeout: float = 60) -> bool:
    try:
        process.wait(timeout)
    except psutil.TimeoutExpired:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_the_demos_prefect_server_ends_with_it(tmp_path, sig):
    proc = hat(["demo", "--no-ui"], tmp_path)
    try:
        server = prefect_server_of(proc)
        proc.send_signal(sig)
        proc.wait(120)
        assert gone(server), f"the Prefect server {server.pid} outlived hat demo ({sig.name})"
    finally:
        if proc.poll() is None:
            proc.kill()
