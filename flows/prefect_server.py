"""A local `prefect server start` on loopback for `hat serve`, `hat retrain` and `hat demo`
when no Prefect API is configured (instead of Prefect's temporary server: this one is a child
that ends with its parent, `hat_core.children`). Imports nothing of Prefect: Prefect reads
its settings when first imported, so the server must be up (and `PREFECT_API_URL` set)
before anything imports `prefect`.

    with local_prefect_server(Path(".hat/prefect")) as api_url:
        ...   # now import flows / prefect
    with prefect_api(Path(".hat/prefect")) as api_url:   # PREFECT_API_URL if set, else local
        ...
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

import httpx

from db.file_modes import private_dir
from hat_core.children import spawn, stop_group
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
                         timeout: float | None = None) -> Iterator[str]:
    """Run `prefect server start` on loopback with its state under `home`; yields the API URL
    (also set as `PREFECT_API_URL` for this process) and stops the server on exit. It must
    answer within `timeout` s (default: `PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS`,
    as for Prefect's own temporary server, else 180: a loaded 2-core machine needs it)."""
    if timeout is None:
        timeout = float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", 180))
    port = port or free_port()
    url = f"http://127.0.0.1:{port}/api"
    if not home.parent.exists():
        private_dir(home.parent)  # the HAT home: owner-only from its creation
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_API_URL": url,
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_UI_ENABLED": "false"}
    log = (home / "server.log").open("wb")
    proc = spawn(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
         "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL)
    try:
        _wait_healthy(proc, url, timeout, home / "server.log")
        os.environ["PREFECT_API_URL"] = url
        yield url
    finally:
        drain_prefect_services()
        stop_group(proc, grace=15.0)
        log.close()
        os.environ.pop("PREFECT_API_URL", None)  # nothing answers there any more


def prefect_api(home: Path) -> AbstractContextManager[str]:
    """The configured Prefect API (`PREFECT_API_URL`), else a local server under `home`."""
    configured = os.environ.get("PREFECT_API_URL")
    return nullcontext(configured) if configured else local_prefect_server(home)


def drain_prefect_services(timeout: float = 10.0) -> None:
    """Send what Prefect's log and event workers still hold while the server is up: once it
    is gone, their drain at interpreter exit waits on an API that no longer answers."""
    if "prefect" not in sys.modules:
        return
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for service in (APILogWorker, EventsWorker):
        service.drain_all(timeout=timeout)


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
