"""`hat ui`: the streamlit command line, and that it serves the console."""

from __future__ import annotations

import subprocess

from console_helpers import free_port, wait_healthy

from hat_cli.ui_cmd import app_path, command


def test_command_line():
    cmd = command("127.0.0.1", 8600)
    assert app_path().name == "app.py" and app_path().exists()
    assert cmd[1:4] == ["-m", "streamlit", "run"]
    assert {"--server.address=127.0.0.1", "--server.port=8600",
            "--browser.gatherUsageStats=false"} <= set(cmd)


def test_it_serves_the_console(console_db):
    port = free_port()
    proc = subprocess.Popen([*command("127.0.0.1", port), "--server.fileWatcherType=none"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
