"""Apply Alembic migrations from code: `upgrade(url)`, `downgrade(url, rev)`, `current(url)`.

The migrations directory is found next to this package (`migrations/`), so `hat db upgrade`
works from any working directory. For a SQLite file, `upgrade` creates its folder (0700 when
new) and leaves the file owner-only (0600, `db.file_modes`).
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from db.engine import make_engine
from db.errors import NotMigratedError, StoreError
from db.file_modes import create_private_sqlite, private_dir, private_sqlite, sqlite_path

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(url: str) -> Config:
    """An Alembic Config for `url` and our migrations directory."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str, rev: str = "head") -> None:
    """Migrate the database at `url` up to `rev` (creating a SQLite file's folder)."""
    _ensure_sqlite_dir(url)
    command.upgrade(alembic_config(url), rev)
    private_sqlite(url)


def downgrade(url: str, rev: str) -> None:
    """Migrate the database at `url` down to `rev` (`base` removes every table)."""
    command.downgrade(alembic_config(url), rev)


def head() -> str:
    """The newest revision in `migrations/`."""
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def current(url: str) -> str | None:
    """The revision the database at `url` is at (None: not migrated)."""
    if _missing_sqlite_file(url):
        return None
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def require_head(url: str) -> None:
    """Raise `NotMigratedError` unless the database at `url` is at the newest revision."""
    try:
        at, newest = current(url), head()
    except OperationalError as exc:
        raise StoreError(f"cannot open the database {_safe(url)}: {exc.orig}") from None
    if at != newest:
        raise NotMigratedError(
            f"the database {_safe(url)} is at revision {at or 'none (empty)'}, not {newest}; "
            "run `hat db upgrade`"
        )


def _ensure_sqlite_dir(url: str) -> None:
    path = sqlite_path(url)
    if path is not None and not path.parent.exists():
        private_dir(path.parent)
    create_private_sqlite(url)


def _missing_sqlite_file(url: str) -> bool:
    path = sqlite_path(url)
    return path is not None and not path.exists()


def _safe(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)
