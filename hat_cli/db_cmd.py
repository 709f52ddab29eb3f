"""`hat db ...`: apply and inspect the SQL store's migrations.

The database is `HAT_DATABASE_URL`, else the embedded SQLite file `$HAT_HOME/hat.db`
(`.hat/hat.db`); `hat db upgrade` creates that folder. `open_store()` is how the other
commands get a session factory: it refuses (exit 2) a database that is not migrated.
"""

from __future__ import annotations

import getpass

import typer
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from db import migrate
from db.engine import make_engine, make_session_factory
from db.file_modes import private_dir, private_sqlite
from db.grants import grant_app_role
from hat_cli.errors import exits_on_error
from hat_core.settings import load_settings

app = typer.Typer(help="Create and migrate the SQL store.", no_args_is_help=True)


def database_url() -> str:
    """The configured database URL (settings: HAT_DATABASE_URL or the embedded file)."""
    return load_settings().resolved_database_url()


def whoami() -> str:
    """The operating-system user, the default actor of audit entries."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def open_store() -> sessionmaker[Session]:
    """A session factory on the configured database, which must be at the head revision
    (`HAT_HOME` and an embedded SQLite file are made owner-only on the way)."""
    url = database_url()
    migrate.require_head(url)
    _private(url)
    return make_session_factory(make_engine(url))


def _private(url: str) -> None:
    home = load_settings().home
    if home.exists():  # not created here: a PostgreSQL setup may have no HAT_HOME at all
        private_dir(home)
    private_sqlite(url)


def _shown(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


@app.command()
@exits_on_error
def upgrade(
    rev: str = typer.Argument("head", help="target revision"),
    grant: str = typer.Option(None, "--grant", help="PostgreSQL: then give this existing role "
                                                   "the application's privileges (db.grants)"),
) -> None:
    """Apply migrations to the configured database (up to REV, default head)."""
    url = database_url()
    migrate.upgrade(url, rev)
    _private(url)
    if grant:
        grant_app_role(url, grant)
        typer.echo(f"granted the application's privileges to role {grant}")
    typer.echo(f"{_shown(url)}: at revision {migrate.current(url)}")


@app.command()
@exits_on_error
def downgrade(rev: str = typer.Argument(..., help="target revision; `base` removes all")) -> None:
    """Revert migrations of the configured database down to REV."""
    url = database_url()
    migrate.downgrade(url, rev)
    typer.echo(f"{_shown(url)}: at revision {migrate.current(url) or 'base'}")


@app.command()
@exits_on_error
def current() -> None:
    """Print the database's revision and the newest one."""
    url = database_url()
    typer.echo(f"{_shown(url)}: at {migrate.current(url) or 'base (empty)'}, head {migrate.head()}")
