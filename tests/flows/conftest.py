"""Fixtures of the flow tests: one Prefect test harness and one MLflow SQLite store per
session (each takes seconds to start), and a fresh SQLite store per test."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from db.engine import make_engine, make_session_factory
from flows.tracking import Tracking


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory):
    """A temporary Prefect API for the session; task results in a temp dir."""
    os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(tmp_path_factory.mktemp("results"))
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


@pytest.fixture(scope="session")
def mlflow_uri(tmp_path_factory) -> str:
    """A migrated MLflow SQLite store shared by the session (creating one takes ~8 s)."""
    folder = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    Tracking(uri, folder / "artifacts").client.search_experiments()
    return uri


@pytest.fixture
def tracking(mlflow_uri, tmp_path) -> Tracking:
    return Tracking(mlflow_uri, tmp_path / "mlartifacts")


@pytest.fixture
def registry_name() -> str:
    """A registered-model name of this test only (the MLflow store is shared)."""
    return f"hat-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def store_url(databases) -> str:
    """A fresh SQLite store at head."""
    return databases.migrated("sqlite")


@pytest.fixture
def store(store_url):
    engine = make_engine(store_url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def hat_env(monkeypatch, tmp_path, store_url, mlflow_uri) -> Path:
    """HAT_* settings pointing at the test's store, the session MLflow store and a temp home."""
    home = tmp_path / "home"
    monkeypatch.setenv("HAT_HOME", str(home))
    monkeypatch.setenv("HAT_DATABASE_URL", store_url)
    monkeypatch.setenv("HAT_MLFLOW_TRACKING_URI", mlflow_uri)
    return home
