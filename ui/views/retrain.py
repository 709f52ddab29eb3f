"""Starting a retrain from the console: a Prefect deployment run, by deployment name.

The console never imports `flows/`; it asks the Prefect API to run the deployment
`retrain/harness-change` with the version's number. Without a reachable Prefect API (none
configured, server down, deployment not registered) the result says so instead of raising.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

DEPLOYMENT = "retrain/harness-change"


@dataclass(frozen=True)
class RetrainStart:
    """What happened: a flow run id, or why none was started."""

    ok: bool
    message: str
    flow_run_id: str | None = None


def retrain_parameters(*, line: str, number: int) -> dict:
    """The deployment's parameters for one harness version."""
    return {"harness_version": number, "line": line}


def prefect_api_url(configured: str | None) -> str | None:
    """The Prefect API to use: the settings' `HAT_PREFECT_API_URL`, else `PREFECT_API_URL`."""
    return configured or os.environ.get("PREFECT_API_URL") or None


def start_retrain(
    *, line: str, number: int, actor: str, api_url: str | None, now: float | None = None
) -> RetrainStart:
    """Ask Prefect to run the retrain deployment for `line` version `number`.

    The idempotency key (line, number, actor, minute of `now`) makes a double click one run.
    """
    if not api_url:
        return RetrainStart(False, "No Prefect API is configured: set HAT_PREFECT_API_URL "
                            "(e.g. http://127.0.0.1:4200/api) and run `hat serve`.")
    down = _unreachable(api_url)
    if down:
        return RetrainStart(False, down)
    minute = int((time.time() if now is None else now) // 60)
    key = f"console:{line}:{number}:{actor}:{minute}"
    from prefect.exceptions import ObjectNotFound

    try:
        run = _run_deployment(api_url, retrain_parameters(line=line, number=number), key)
    except ObjectNotFound:
        return RetrainStart(False, f"The Prefect API at {api_url} has no deployment "
                            f"{DEPLOYMENT}: register it with `hat serve`.")
    except Exception as exc:  # noqa: BLE001 - any API/transport failure is reported, not raised
        return RetrainStart(False, f"Prefect could not start {DEPLOYMENT} at {api_url}: "
                            f"{type(exc).__name__}: {exc}")
    return RetrainStart(True, f"Started flow run {run.name} ({run.id}) of {DEPLOYMENT}.",
                        str(run.id))


def recent_flow_runs(api_url: str | None, *, limit: int = 20) -> tuple[list[dict], str]:
    """The newest flow runs of the retrain deployment as rows, or ([], why not)."""
    if not api_url:
        return [], "No Prefect API is configured (HAT_PREFECT_API_URL)."
    down = _unreachable(api_url)
    if down:
        return [], down
    try:
        runs = _read_flow_runs(api_url, limit)
    except Exception as exc:  # noqa: BLE001 - reported on the page
        return [], f"Prefect could not list runs: {type(exc).__name__}: {exc}"
    return [{"flow run": r.name, "state": r.state_name, "parameters": r.parameters,
             "start": r.start_time, "id": str(r.id)} for r in runs], ""


def _unreachable(api_url: str) -> str:
    """Why the API at `api_url` cannot be used, or "" (a 2-second health check)."""
    import httpx

    try:
        httpx.get(api_url.rstrip("/") + "/health", timeout=2).raise_for_status()
    except httpx.HTTPError as exc:
        return f"The Prefect API at {api_url} is not reachable ({type(exc).__name__}); " \
               "is `prefect server start` running?"
    return ""


def _read_flow_runs(api_url: str, limit: int):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.settings import PREFECT_API_URL, temporary_settings

    name = DEPLOYMENT.split("/", 1)[1]
    with temporary_settings(updates={PREFECT_API_URL: api_url}):
        with get_client(sync_client=True) as client:
            return client.read_flow_runs(
                deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=[name])),
                sort=FlowRunSort.START_TIME_DESC, limit=limit)


def _run_deployment(api_url: str, parameters: dict, idempotency_key: str):
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: api_url}):
        return run_deployment(name=DEPLOYMENT, parameters=parameters, timeout=0,
                              idempotency_key=idempotency_key)
