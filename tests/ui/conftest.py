"""Console test fixtures: a migrated SQLite store seeded with demo users and history and an
MLflow SQLite registry holding its model versions (both made once per session, copied per test
into the test's `HAT_HOME`), and AppTest runs of `ui/app.py` logged in as a role."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from console_helpers import APP, PASSWORD, home_with_registry, logged_in


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    from demo_data import add_demo_history, add_demo_users

    from db.engine import in_transaction, make_engine, make_session_factory
    from db.migrate import upgrade

    path = tmp_path_factory.mktemp("console") / "template.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    in_transaction(sessions, lambda s: add_demo_users(s, password=PASSWORD))
    ids = in_transaction(sessions, add_demo_history)
    engine.dispose()
    return path, ids


@pytest.fixture(scope="session")
def mlflow_template(tmp_path_factory) -> Path:
    """An MLflow SQLite store whose registry holds the demo model versions (champion: 1)."""
    from demo_data import add_demo_registry

    from hat_core.release.registry import ModelRegistry

    path = tmp_path_factory.mktemp("mlflow") / "mlflow.db"
    add_demo_registry(ModelRegistry(f"sqlite:///{path}"))
    return path


@pytest.fixture
def console_db(seeded_template, mlflow_template, tmp_path, monkeypatch
               ) -> tuple[str, dict[str, int]]:
    """A fresh copy of the seeded store and registry, configured for the console (env)."""
    template, ids = seeded_template
    path = tmp_path / "hat.db"
    shutil.copyfile(template, path)
    url = f"sqlite:///{path}"
    monkeypatch.setenv("HAT_DATABASE_URL", url)
    monkeypatch.setenv("HAT_HOME", str(home_with_registry(tmp_path / "home", mlflow_template)))
    monkeypatch.delenv("HAT_MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("HAT_PREFECT_API_URL", raising=False)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    return url, ids


@pytest.fixture
def console_sessions(console_db):
    from db.engine import make_engine, make_session_factory

    engine = make_engine(console_db[0])
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def console(console_db):
    """`console(role, page=None)`: an AppTest of the app logged in as the demo user `role`
    (a real session in the store)."""
    from streamlit.testing.v1 import AppTest

    from db.engine import make_engine, make_session_factory

    engine = make_engine(console_db[0])

    def open_as(role: str | None, page: str | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=30)
        if role is not None:
            logged_in(at, make_session_factory(engine), role)
        at.run()
        if page is not None:
            at.switch_page(f"pages/{page}.py").run()
        return at

    yield open_as
    engine.dispose()

