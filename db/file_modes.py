"""Owner-only file modes for the embedded stores: `HAT_HOME` 0700, the SQLite file 0600.

    private_dir(settings.home)         # create it 0700, or take group/other bits away
    private_sqlite(url)                # hat.db (and its -wal/-shm) 0600; no-op off SQLite
    write_atomically(path, text)       # a whole file, 0600 unless told, never half written

The SQLite file holds the argon2 password hashes and the session hashes, so no other local
user may read it; `hat db upgrade`, every `hat` command that opens the store and the console
apply these. A directory or file that already exists keeps its owner bits and loses the
group and other bits; nothing is made more permissive, and what another user owns is left
alone.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from sqlalchemy.engine import make_url


def private_dir(path: Path) -> Path:
    """Create `path` (and its parents) and make `path` itself owner-only (0700)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    _drop_group_other(path)
    return path


def write_atomically(path: Path, text: str, mode: int = 0o600) -> Path:
    """Write `text` to `path` through a temporary file in the same folder (created 0600,
    then given `mode`) and a rename, so no reader sees it half written or, for 0600, readable
    by others at any moment; the folder is created if missing."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if mode != 0o600:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def create_private_sqlite(url: str) -> None:
    """Create a missing SQLite file empty with mode 0600 (SQLite fills an empty file), so
    the store is never readable by others, not even between its creation and a chmod."""
    path = sqlite_path(url)
    if path is None or path.exists():
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:  # another process made it first
        pass


def private_sqlite(url: str) -> None:
    """Make a SQLite database file and its WAL/SHM files owner-only (0600), if they exist."""
    path = sqlite_path(url)
    if path is None:
        return
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if candidate.exists():
            _drop_group_other(candidate)


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL; None for other databases and in-memory SQLite."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def _drop_group_other(path: Path) -> None:
    info = path.stat()
    if info.st_uid != os.geteuid():  # not ours to change (a shared or mounted folder)
        return
    if info.st_mode & 0o077:
        os.chmod(path, info.st_mode & 0o700)
