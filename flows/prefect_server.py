"""A local `prefect server start` on loopback for `hat serve` when no Prefect API is
configured. Imports nothing of Prefect: Prefect reads its settings when first imported, so
the server must be up (and `PREFECT_API_URL` set) before anything imports `prefect`.

    with local_prefect_server(Path(".hat/prefect")) as api_url:
        ...   # now import flows / prefect
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from hat_core.errors import HatError


class ServeError(HatError):
    """The local Prefect server did not come up."""


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def local_prefect_server(home: Path, port: int | None = None,
                         timeout: float = 90.0) -> Iterator[str]:
    """Run `prefect server start` on loopback with its state under `home`; yields the API URL
    (also set as `PREFECT_API_URL` for this process) and stops the server on exit."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}/api"
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_API_URL": url,
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_UI_ENABLED": "false"}
    log = (home / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
         "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_healthy(proc, url, timeout, home / "server.log")
        os.environ["PREFECT_API_URL"] = url
        yield url
    finally:
        stop_process(proc)
        log.close()


def _wait_healthy(proc: subprocess.Popen, url: str, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServeError(f"prefect server exited with {proc.returncode}; see {log}")
        try:
            if httpx.get(f"{url}/health", timeout=2, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise ServeError(f"prefect server not healthy after {timeout:.0f} s; see {log}")


def stop_process(proc: subprocess.Popen, grace: float = 15.0) -> None:
    """SIGTERM the process group, then SIGKILL after `grace` seconds."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass
