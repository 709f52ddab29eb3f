"""Links from the console into the MLflow UI (runs and registered model versions), at the
address a browser can open (`HAT_MLFLOW_UI_URL`)."""

from __future__ import annotations


def mlflow_ui_base(tracking_uri: str | None, ui_url: str | None = None) -> str | None:
    """The MLflow UI address for links: `ui_url` (`HAT_MLFLOW_UI_URL`, what a browser can
    open, e.g. `http://localhost:5000` where the tracking URI is `http://mlflow:5000` inside
    compose), else the tracking URI when it is an MLflow server, else None."""
    for candidate in (ui_url, tracking_uri):
        if candidate and candidate.startswith(("http://", "https://")):
            return candidate.rstrip("/")
    return None


def run_link(base: str | None, run_id: str) -> str | None:
    """The MLflow UI page of a run."""
    return f"{base}/#/runs/{run_id}" if base and run_id else None


def model_link(base: str | None, name: str, version: str) -> str | None:
    """The MLflow UI page of a registered model version."""
    return f"{base}/#/models/{name}/versions/{version}" if base else None
