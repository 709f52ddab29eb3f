"""Links from the console into the MLflow UI (runs and registered model versions)."""

from __future__ import annotations


def mlflow_ui_base(tracking_uri: str | None) -> str | None:
    """The MLflow UI address when the tracking URI is an MLflow server, else None."""
    if tracking_uri and tracking_uri.startswith(("http://", "https://")):
        return tracking_uri.rstrip("/")
    return None


def run_link(base: str | None, run_id: str) -> str | None:
    """The MLflow UI page of a run."""
    return f"{base}/#/runs/{run_id}" if base and run_id else None


def model_link(base: str | None, name: str, version: str) -> str | None:
    """The MLflow UI page of a registered model version."""
    return f"{base}/#/models/{name}/versions/{version}" if base else None
