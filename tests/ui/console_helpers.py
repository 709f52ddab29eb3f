"""Shared constants and helpers of the console tests (imported as `console_helpers`)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "ui" / "app.py")
EXAMPLES = ROOT / "examples" / "harnesses"
PASSWORD = "demo-password-1"
SECRET = "test-console-secret"


def home_with_registry(home: Path, mlflow_template: Path) -> Path:
    """`home` with a copy of the demo registry where the settings look for it by default."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(mlflow_template, home / "mlflow.db")
    return home


def texts(at) -> str:
    """Every markdown, caption, title, header, error, success and info text of a run."""
    parts = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "error", "success",
                 "info", "warning"):
        parts += [str(e.value) for e in getattr(at, kind)]
    return "\n".join(parts)


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Poll Streamlit's `/_stcore/health` until it answers 200 (or the process dies)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} did not become healthy in {timeout} s")
