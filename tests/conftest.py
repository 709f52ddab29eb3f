"""Shared fixtures: paths to the example harnesses; throwaway SQL store databases."""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "harnesses"

# Under `make test` two xdist workers share the 2 cores: torch's default (one thread per core)
# in each put 4 busy OpenMP threads on 2 cores, which ran the demo's parallel training 1.5-3x
# slower (docs/operations.md). Each worker, and every process it starts, gets one thread;
# a stage config's own `num_threads` still wins.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

# Streamlit's script runner (the console tests' AppTest) installs each page it runs as
# `sys.modules["__main__"]` and leaves it there; a later test on the same worker that starts
# processes with multiprocessing's "spawn" then re-runs that page in every child (as
# `__mp_main__`), which fails without the console's store. Put the real one back after each test.
_MAIN_MODULE = sys.modules["__main__"]


@pytest.fixture(autouse=True)
def _real_main_module() -> Iterator[None]:
    yield
    if sys.modules.get("__main__") is not _MAIN_MODULE:
        sys.modules["__main__"] = _MAIN_MODULE


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return EXAMPLES


@pytest.fixture(scope="session")
def v1_path() -> Path:
    return EXAMPLES / "v1.yaml"


# --- SQL store fixtures -------------------------------------------------------------------
# `db_url` is a fresh database at the head revision, once on SQLite (a temp file) and once on
# the local PostgreSQL (marked `postgres`). Each backend is migrated once per session into a
# template that every test clones (a file copy; CREATE DATABASE ... TEMPLATE), and every
# database a run creates is dropped at its end. PostgreSQL unreachable: skip, or fail when
# the `CI` variable is set.

PG_HOST, PG_PORT = "127.0.0.1", 5432
PG_USERS = ("postgres", "root")
BACKENDS = [pytest.param("sqlite", id="sqlite"),
            pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)]
_pg_user: list[str | None] = []


def pg_admin_user() -> str | None:
    """A PostgreSQL role that can create databases on 127.0.0.1:5432, or None."""
    if not _pg_user:
        import psycopg

        found = None
        for user in PG_USERS:
            try:
                with psycopg.connect(host=PG_HOST, port=PG_PORT, user=user, dbname="postgres",
                                     connect_timeout=3):
                    found = user
                    break
            except psycopg.OperationalError:
                continue
        _pg_user.append(found)
    return _pg_user[0]


def require_postgres() -> str:
    """The admin user; skips the test without PostgreSQL, or fails it under CI."""
    user = pg_admin_user()
    if user is None:
        message = f"PostgreSQL is not reachable on {PG_HOST}:{PG_PORT}"
        if os.environ.get("CI"):
            pytest.fail(message + " (CI is set: PostgreSQL tests must run)")
        pytest.skip(message)
    return user


def pg_execute(sql: str) -> None:
    """Run one statement on the maintenance database, outside a transaction."""
    import psycopg

    with psycopg.connect(host=PG_HOST, port=PG_PORT, user=require_postgres(),
                         dbname="postgres", autocommit=True) as conn:
        conn.execute(sql)


def pg_url(name: str) -> str:
    return f"postgresql+psycopg://{require_postgres()}@{PG_HOST}:{PG_PORT}/{name}"


class Databases:
    """Creates uniquely named throwaway databases and removes them all at the end."""

    def __init__(self, tmp: Path):
        self.tmp, self.pg_names, self.templates = tmp, [], {}

    def empty(self, backend: str) -> str:
        name = f"hat_test_{uuid.uuid4().hex[:12]}"
        if backend == "sqlite":
            return f"sqlite:///{self.tmp / (name + '.db')}"
        pg_execute(f"CREATE DATABASE {name}")
        self.pg_names.append(name)
        return pg_url(name)

    def migrated(self, backend: str) -> str:
        from db.migrate import upgrade

        if backend not in self.templates:
            self.templates[backend] = self.empty(backend)
            upgrade(self.templates[backend])
        template = self.templates[backend]
        if backend == "sqlite":
            url = self.empty("sqlite")
            source = Path(template.removeprefix("sqlite:///"))
            shutil.copyfile(source, url.removeprefix("sqlite:///"))
            return url
        name = f"hat_test_{uuid.uuid4().hex[:12]}"
        pg_execute(f"CREATE DATABASE {name} TEMPLATE {template.rsplit('/', 1)[1]}")
        self.pg_names.append(name)
        return pg_url(name)

    def drop_all(self) -> None:
        for name in self.pg_names:
            pg_execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def databases(tmp_path_factory) -> Iterator[Databases]:
    dbs = Databases(tmp_path_factory.mktemp("databases"))
    yield dbs
    dbs.drop_all()


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    if request.param == "postgres":
        require_postgres()
    return request.param


@pytest.fixture
def db_url(databases, backend) -> str:
    """A fresh database at the head revision (SQLite, then PostgreSQL)."""
    return databases.migrated(backend)


@pytest.fixture
def empty_db_url(databases, backend) -> str:
    """A fresh database with no tables (SQLite, then PostgreSQL)."""
    return databases.empty(backend)


@pytest.fixture
def sessions(db_url):
    """A session factory on `db_url`; use `with sessions.begin() as s:`."""
    from db.engine import make_engine, make_session_factory

    engine = make_engine(db_url)
    yield make_session_factory(engine)
    engine.dispose()
