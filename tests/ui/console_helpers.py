"""Shared constants and helpers of the console tests (imported as `console_helpers`)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hat_cli.ui_cmd import PRODUCTION_FLAGS

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "ui" / "app.py")
EXAMPLES = ROOT / "examples" / "harnesses"
PASSWORD = "demo-password-1"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def logged_in(at, sessions, name: str):
    """Log user `name` into the AppTest `at` as the login page does: a session in the store
    whose token the Streamlit session holds (`ui.session`). Returns `at`."""
    from db.engine import in_transaction
    from db.sessions_repo import open_session
    from db.users_repo import get_user

    def open_for(s):
        return open_session(s, user_id=get_user(s, name=name).id, client="console")

    at.session_state["session_token"] = in_transaction(sessions, open_for)
    return at


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


def require_chromium() -> None:
    """Skip without Debian chromium, except under CI, where browser tests must run."""
    if not Path(CHROMIUM).exists():
        message = "no /usr/bin/chromium: run `make browser`"
        if os.environ.get("CI"):
            pytest.fail(message + " (CI is set: browser tests must run)")
        pytest.skip(message)


@contextmanager
def console_server(env: dict[str, str], log_path: Path, port: int | None = None,
                   extra: tuple[str, ...] | list[str] = ()) -> Iterator[str]:
    """The console (`streamlit run ui/app.py`) on a loopback port (`port`, else a free one)
    with `env` and `extra` Streamlit flags; yields its base URL once healthy, and stops it
    (terminate, then kill) on exit."""
    port = port or free_port()
    log = open(log_path, "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", APP, "--server.headless=true",
         "--server.address=127.0.0.1", f"--server.port={port}",
         "--server.fileWatcherType=none", "--browser.gatherUsageStats=false",
         *PRODUCTION_FLAGS, *extra],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def settled(page, timeout: float = 20_000) -> None:
    """Wait until Streamlit has finished the current run of a Playwright `page`."""
    page.wait_for_timeout(300)
    page.locator("[data-testid='stStatusWidget']").wait_for(state="hidden", timeout=timeout)


def log_in(page, base: str, name: str, timeout: float = 20_000) -> None:
    """Log the demo user `name` in through the login form of a Playwright `page` at `base`
    (`timeout`: ms for the run after it)."""
    page.goto(base)
    page.get_by_role("textbox", name="User name").fill(name)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_text("Signed in as").wait_for()
    settled(page, timeout)


def click_nav(page, title: str, timeout: float = 20_000) -> None:
    """Open the console page `title` from the sidebar (unfolding a long menu first)."""
    nav = page.locator("[data-testid='stSidebarNav']")
    more = nav.get_by_text(re.compile(r"^View \d+ more$"))
    if more.count():
        more.first.click()
    nav.get_by_role("link", name=title, exact=True).click()
    settled(page, timeout)
