"""`hat ui`: start the Streamlit operator console (`ui/app.py`) with usage statistics off.

    hat ui                          # http://127.0.0.1:8501
    hat ui --host 0.0.0.0 --port 8600

The developer toolbar is hidden and error details stay in the server log (`PRODUCTION_FLAGS`).
The console reads the same settings as the CLI (`HAT_DATABASE_URL`, `HAT_HOME`, ...); log in
with a user made by `hat user add NAME --role R`. See docs/console.md.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import typer

from hat_core.children import spawn, stop_group

# No developer toolbar (Deploy, Rerun, Clear cache) and no exception details in browsers: the
# tracebacks go to the server's log only.
PRODUCTION_FLAGS = ("--client.toolbarMode=viewer", "--client.showErrorDetails=none")


def app_path() -> Path:
    """The console's entry script inside the installed `ui` package."""
    spec = importlib.util.find_spec("ui")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("the `ui` package is not installed")
    return Path(spec.origin).resolve().parent / "app.py"


def command(host: str, port: int) -> list[str]:
    """The `streamlit run` command line of the console."""
    return [sys.executable, "-m", "streamlit", "run", str(app_path()),
            f"--server.address={host}", f"--server.port={port}", "--server.headless=true",
            "--browser.gatherUsageStats=false", *PRODUCTION_FLAGS]


def ui(
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on"),
    port: int = typer.Option(8501, "--port", min=1, max=65535, help="port to listen on"),
) -> None:
    """Start the operator console (Streamlit) until interrupted."""
    typer.echo(f"HAT Ops console on http://{host}:{port} (Ctrl+C to stop)", err=True)
    proc = spawn(command(host, port))
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        code = 0
    finally:
        stop_group(proc)
    raise typer.Exit(code=code)
