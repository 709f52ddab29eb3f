"""A `transformers serve` process for a local model directory, on 127.0.0.1 and a free port.

    with transformers_server(Path("models/base")) as base_url:
        ...  # OpenAI-compatible: f"{base_url}/v1/chat/completions"

Needs `transformers[serving]` (fastapi, uvicorn, openai). The server is started in its own
process group and ends with this process (`hat_core.children`); on exit it gets SIGTERM, then
SIGKILL after a grace period, so nothing is left running. Readiness is polled on `/health`.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from hat_core.children import spawn, stop_group
from hat_core.errors import HatError, NotFoundError, Problem

HOST = "127.0.0.1"


class ServerError(HatError):
    """The model server did not start (its log tail is in the problems)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def serve_command(model_dir: Path, port: int, device: str | None = None) -> list[str]:
    """The `transformers serve` command line, run with this Python."""
    cmd = [sys.executable, "-m", "transformers.cli.transformers", "serve", str(model_dir),
           "--host", HOST, "--port", str(port)]
    return cmd + (["--device", device] if device else [])


def _ready(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/health", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def _log_tail(log: Path, lines: int = 20) -> list[str]:
    return log.read_text(errors="replace").splitlines()[-lines:] if log.exists() else []


def wait_ready(proc: subprocess.Popen, base_url: str, log: Path, timeout: float) -> None:
    """Poll `/health` until it answers 200; raise `ServerError` on exit or timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"transformers serve exited with code {proc.returncode}",
                              _problems(log))
        if _ready(base_url):
            return
        time.sleep(0.5)
    raise ServerError(f"transformers serve not ready after {timeout:.0f} s", _problems(log))


def _problems(log: Path) -> list[Problem]:
    return [Problem("log", line) for line in _log_tail(log)]


@contextlib.contextmanager
def transformers_server(model_dir: str | Path, *, device: str | None = None,
                        startup_timeout: float = 180.0) -> Iterator[str]:
    """Run `transformers serve` for `model_dir` on loopback; yields its base URL."""
    model_dir = Path(model_dir)
    if not (model_dir / "config.json").is_file():
        raise NotFoundError(f"not a model directory (no config.json): {model_dir}")
    port = free_port()
    base_url = f"http://{HOST}:{port}"
    with tempfile.TemporaryDirectory(prefix="hat-serve-") as tmp:
        log = Path(tmp) / "serve.log"
        with log.open("wb") as out:
            proc = spawn(serve_command(model_dir, port, device), stdout=out,
                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_ready(proc, base_url, log, startup_timeout)
            yield base_url
        finally:
            stop_group(proc)
