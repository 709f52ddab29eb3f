"""The console's connections: a cached session factory from the settings, and the registry.

`read(fn)` runs `fn(session)` in a short read session; `write(fn)` runs it in one
transaction (`db.engine.in_transaction`, retried on transient conflicts). The database is
`HAT_DATABASE_URL`, else the embedded SQLite file under `HAT_HOME`. `registry()` is the
MLflow model registry the flows use (`HAT_MLFLOW_TRACKING_URI`, else under `HAT_HOME`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import streamlit as st
from sqlalchemy.orm import Session, sessionmaker

from db.engine import in_transaction, make_engine, make_session_factory
from db.file_modes import private_dir, private_sqlite
from hat_core.release.registry import ModelRegistry
from hat_core.settings import Settings, load_settings

T = TypeVar("T")


def settings() -> Settings:
    """The settings, read from the environment on each run (cheap; tests change them)."""
    return load_settings()


@st.cache_resource(show_spinner=False)
def _factory(url: str, home: str) -> sessionmaker[Session]:
    if Path(home).exists():
        private_dir(Path(home))
    private_sqlite(url)
    return make_session_factory(make_engine(url, pool_pre_ping=True))


def sessions() -> sessionmaker[Session]:
    """The session factory of the configured database (one engine per URL per process);
    `HAT_HOME` and a SQLite store are made owner-only when it is first built."""
    config = settings()
    return _factory(config.resolved_database_url(), str(config.home))


def read(fn: Callable[[Session], T]) -> T:
    """`fn(session)` in a read session that is closed right after."""
    with sessions()() as session:
        return fn(session)


def write(fn: Callable[[Session], T]) -> T:
    """`fn(session)` in one committed transaction."""
    return in_transaction(sessions(), fn)


def registry() -> ModelRegistry:
    """The MLflow registry of the settings (aliases of the A/B slot)."""
    return ModelRegistry(settings().resolved_mlflow_uri())
