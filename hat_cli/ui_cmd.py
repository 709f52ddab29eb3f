"""`hat ui`: start the Streamlit operator console (`ui/app.py`) with usage statistics off.

    hat ui                          # http://127.0.0.1:8501
    hat ui --host 0.0.0.0 --port 8600

The developer toolbar is hidden and error details stay in the server log (`PRODUCTION_FLAGS`).
The console reads the same settings as the CLI (`HAT_DATABASE_URL`, `HAT_HOME`, ...); log in
with a user made by `hat user add NAME --role R`. With single sign-on configured
(`HAT_SSO_*`, `ui.sso_config`), the settings are checked first and the `[auth]` secrets
`st.login` reads are written to `$HAT_HOME/console/secrets.toml` (mode 0600) and handed to
Streamlit (`--secrets.files`); without SSO a stale copy is removed. See docs/console.md.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import typer

from hat_cli.errors import exits_on_error
from hat_core.children import spawn, stop_group
from hat_core.settings import Settings, load_settings
from ui.sso_config import sso_config, write_secrets

# No developer toolbar (Deploy, Rerun, Clear cache) and no exception details in browsers: the
# tracebacks go to the server's log only.
PRODUCTION_FLAGS = ("--client.toolbarMode=viewer", "--client.showErrorDetails=none")


def app_path() -> Path:
    """The console's entry script inside the installed `ui` package."""
    spec = importlib.util.find_spec("ui")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("the `ui` package is not installed")
    return Path(spec.origin).resolve().parent / "app.py"


def secrets_path(settings: Settings) -> Path:
    """Where `hat ui` writes Streamlit's `[auth]` secrets: `$HAT_HOME/console/secrets.toml`."""
    return Path(settings.home).resolve() / "console" / "secrets.toml"


def sso_flags(settings: Settings) -> list[str]:
    """With SSO configured: write the secrets file (0600) and return the flag that points
    Streamlit at it; without: remove a stale file and return no flag. A half-configured SSO
    raises `ConfigError` naming every missing setting."""
    config = sso_config(settings)
    path = secrets_path(settings)
    if config is None:
        path.unlink(missing_ok=True)
        return []
    return [f"--secrets.files={write_secrets(config, path)}"]


def command(host: str, port: int, extra: list[str] | None = None) -> list[str]:
    """The `streamlit run` command line of the console (`extra`: more Streamlit flags)."""
    return [sys.executable, "-m", "streamlit", "run", str(app_path()),
            f"--server.address={host}", f"--server.port={port}", "--server.headless=true",
            "--browser.gatherUsageStats=false", *PRODUCTION_FLAGS, *(extra or [])]


@exits_on_error
def ui(
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on"),
    port: int = typer.Option(8501, "--port", min=1, max=65535, help="port to listen on"),
) -> None:
    """Start the operator console (Streamlit) until interrupted."""
    flags = sso_flags(load_settings())
    typer.echo(f"HAT Ops console on http://{host}:{port} (Ctrl+C to stop)"
               + ("; SSO on" if flags else ""), err=True)
    proc = spawn(command(host, port, flags))
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        code = 0
    finally:
        stop_group(proc)
    raise typer.Exit(code=code)
