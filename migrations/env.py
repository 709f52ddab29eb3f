"""Alembic environment: migrates the database whose URL our code passes in.

`db.migrate` sets `sqlalchemy.url` on the Config (or hands over a live connection in
`config.attributes["connection"]`); a plain `alembic` command run from the repository root
falls back to the HAT settings (`HAT_DATABASE_URL`, else the embedded SQLite file).
"""

from __future__ import annotations

from alembic import context

from db.engine import make_engine
from db.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from hat_core.settings import load_settings

    return load_settings().resolved_database_url()


def _run(connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        _sqlite_foreign_keys(connection, on=False)
    try:
        _migrate(connection)
    finally:
        if sqlite:
            _sqlite_foreign_keys(connection, on=True)


def _sqlite_foreign_keys(connection, *, on: bool) -> None:
    """SQLite's batch mode rebuilds a table by copy, drop and rename, which an enforced
    foreign key refuses while other tables point at it (SQLite's documented procedure: keys
    off outside the transaction, then `foreign_key_check`). On the raw connection, so that no
    transaction is open; when turning keys back on, any dangling reference is an error."""
    raw = connection.connection.dbapi_connection
    if on:
        dangling = raw.execute("PRAGMA foreign_key_check").fetchall()
        raw.execute("PRAGMA foreign_keys = ON")
        if dangling:
            raise RuntimeError(f"migration left dangling foreign keys: {dangling[:5]}")
        return
    raw.execute("PRAGMA foreign_keys = OFF")


def _migrate(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(_url())
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
