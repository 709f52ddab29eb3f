"""Owner-only modes of the embedded store: a new `HAT_HOME` is 0700 and `hat.db` 0600 from
its creation; `hat db upgrade` and any `hat` command on the store take group and other bits
away from an existing home and database file (and its WAL); a file written atomically is
whole, with its mode, or not there."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from db import migrate
from db.engine import make_engine
from db.file_modes import private_dir, private_sqlite, write_atomically

HAT = str(Path(sys.executable).parent / "hat")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_upgrade_makes_a_new_home_and_store_owner_only(tmp_path):
    old = os.umask(0o022)  # the usual umask: without the fix the file would be 0644
    try:
        url = f"sqlite:///{tmp_path / 'home' / 'hat.db'}"
        migrate.upgrade(url)
    finally:
        os.umask(old)
    assert mode(tmp_path / "home") == 0o700
    assert mode(tmp_path / "home" / "hat.db") == 0o600
    engine = make_engine(url)  # WAL mode: the -wal and -shm files take the file's mode
    with engine.connect() as conn:
        conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
        conn.commit()
        for suffix in ("-wal", "-shm"):  # present while a connection is open
            assert mode(tmp_path / "home" / f"hat.db{suffix}") == 0o600
    engine.dispose()


def test_existing_open_modes_are_tightened(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    url = f"sqlite:///{home / 'hat.db'}"
    migrate.upgrade(url)
    os.chmod(home / "hat.db", 0o644)
    private_dir(home)
    private_sqlite(url)
    assert (mode(home), mode(home / "hat.db")) == (0o700, 0o600)
    os.chmod(home / "hat.db", 0o400)  # never made more permissive
    private_sqlite(url)
    assert mode(home / "hat.db") == 0o400


def test_hat_commands_tighten_the_embedded_default(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "HAT_HOME": str(home)}
    env.pop("HAT_DATABASE_URL", None)

    def hat(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([HAT, *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=120)

    assert hat("db", "upgrade").returncode == 0
    assert (mode(home), mode(home / "hat.db")) == (0o700, 0o600)
    os.chmod(home, 0o755)
    os.chmod(home / "hat.db", 0o664)
    listed = hat("user", "list")
    assert listed.returncode == 0, listed.stderr
    assert (mode(home), mode(home / "hat.db")) == (0o700, 0o600)


def test_write_atomically_gives_the_mode_and_leaves_no_temporary_file(tmp_path):
    path = write_atomically(tmp_path / "new" / "secret.toml", "a = 1\n")
    assert path.read_text() == "a = 1\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    shared = write_atomically(tmp_path / "anchor.json", "{}\n", mode=0o644)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o644
    write_atomically(path, "a = 2\n")  # replaces
    assert path.read_text() == "a = 2\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["secret.toml"]


def test_a_failed_write_keeps_the_old_file_whole(tmp_path):
    path = write_atomically(tmp_path / "kept.txt", "old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomically(path, "\udcff not encodable")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["kept.txt"]
