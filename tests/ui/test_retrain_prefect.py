"""Starting a retrain through a real (temporary) Prefect API: missing deployment, then a
registered one (the run is created with the version's parameters; a repeat is the same run)."""

from __future__ import annotations

import pytest

from ui.views.retrain import recent_flow_runs, start_retrain

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory):
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_RESULTS_LOCAL_STORAGE_PATH,
        temporary_settings,
    )
    from prefect.testing.utilities import prefect_test_harness

    results = tmp_path_factory.mktemp("prefect_results")
    with temporary_settings(updates={PREFECT_RESULTS_LOCAL_STORAGE_PATH: results}):
        with prefect_test_harness():
            yield PREFECT_API_URL.value()


def _register_deployment() -> None:
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.utilities.callables import parameter_schema

    @flow(name="retrain")
    def retrain(harness_version: int, line: str = "") -> None:
        """A stand-in with the retrain flow's parameters (never executed here)."""

    with get_client(sync_client=True) as client:
        client.create_deployment(
            flow_id=client.create_flow(retrain), name="harness-change",
            parameter_openapi_schema=parameter_schema(retrain).model_dump_for_openapi())


def test_start_retrain_through_the_deployment(prefect_api):
    missing = start_retrain(line="live", number=3, actor="ann", api_url=prefect_api)
    assert not missing.ok and "no deployment retrain/harness-change" in missing.message

    _register_deployment()
    started = start_retrain(line="live", number=3, actor="ann", api_url=prefect_api, now=600)
    assert started.ok, started.message
    again = start_retrain(line="live", number=3, actor="ann", api_url=prefect_api, now=610)
    assert again.flow_run_id == started.flow_run_id  # idempotency key: a double click
    runs, why = recent_flow_runs(prefect_api)
    assert why == ""
    assert [(r["id"], r["parameters"]) for r in runs] == [
        (started.flow_run_id, {"harness_version": 3, "line": "live"})]
