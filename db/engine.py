"""Engines and sessions for the SQL store: SQLite (embedded) or PostgreSQL (production).

`make_engine(url)` gives SQLite files WAL, foreign keys, a busy timeout and `BEGIN IMMEDIATE`
transactions (so concurrent writers queue instead of failing); `make_session_factory(engine)`
builds sessions; `in_transaction(factory, fn)` runs `fn(session)` in one transaction and
retries it a bounded number of times on transient conflicts (locks, serialization failures).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

T = TypeVar("T")
BUSY_TIMEOUT_MS = 30_000
# PostgreSQL SQLSTATEs worth retrying: serialization failure, deadlock.
RETRY_SQLSTATES = {"40001", "40P01"}


def make_engine(url: str, **kwargs) -> Engine:
    """An engine for `url`; SQLite connections get the pragmas and immediate transactions."""
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    # a pooled connection that the server ended (restart, outage) is replaced, not raised
    kwargs.setdefault("pool_pre_ping", True)
    engine = create_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":
        _configure_sqlite(engine)
    return engine


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        # Let SQLAlchemy, not pysqlite, decide when transactions begin (see "begin" below).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:
        # Take the write lock up front: a reader that later writes cannot deadlock.
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded values readable after commit."""
    return sessionmaker(engine, expire_on_commit=False)


def in_transaction(
    factory: sessionmaker[Session], fn: Callable[[Session], T], *, attempts: int = 5
) -> T:
    """Run `fn(session)` in one transaction, committed at the end or rolled back on error.

    Transient conflicts (SQLite "database is locked", PostgreSQL serialization failures and
    deadlocks) are retried up to `attempts` times with a short backoff; anything else raises.
    """
    for attempt in range(1, attempts + 1):
        try:
            with factory.begin() as session:
                return fn(session)
        except DBAPIError as exc:
            if attempt == attempts or not is_transient(exc):
                raise
            time.sleep(0.05 * attempt)
    raise AssertionError("unreachable")


def is_transient(exc: DBAPIError) -> bool:
    """Whether a database error is a conflict that a retry can resolve."""
    sqlstate = getattr(exc.orig, "sqlstate", None)
    if sqlstate in RETRY_SQLSTATES:
        return True
    return isinstance(exc, OperationalError) and "locked" in str(exc.orig).lower()
