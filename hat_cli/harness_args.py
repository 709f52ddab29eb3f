"""Turning a command-line argument into a `Harness`: `hat harness diff A B` and friends.

An argument is a harness file (`.yaml`, `.yml`, `.json`) or, when it is shaped like a stored
version reference (`N` or `LINE:N`, see `VERSION_REF`) and is not an existing file, that
version from the configured SQL store (`HAT_DATABASE_URL` or the embedded SQLite file).
"""

from __future__ import annotations

import re
from pathlib import Path

from db.harness_repo import get_version
from db.values import HarnessVersion
from hat_cli.db_cmd import open_store
from hat_core.errors import HarnessError
from hat_core.harness.io import load_harness
from hat_core.harness.model import Harness

VERSION_REF = re.compile(r"^(?:(?P<line>[^:\s]+):)?(?P<number>[0-9]+)$")


def load_harness_arg(arg: str) -> Harness:
    """The harness named by `arg`: an existing file wins, then a version reference."""
    if is_version_ref(arg) and not Path(arg).exists():
        return load_version_arg(arg)
    return load_harness(arg)


def is_version_ref(arg: str) -> bool:
    """Whether `arg` looks like a stored version: `3` or `live-stream-avatar:3`."""
    return VERSION_REF.match(arg.strip()) is not None


def load_version_arg(arg: str) -> Harness:
    """The stored harness version named by `N` or `LINE:N`."""
    return load_stored_version(arg).harness()


def load_stored_version(arg: str) -> HarnessVersion:
    """The stored version (with its metadata) named by `N` or `LINE:N`."""
    match = VERSION_REF.match(arg.strip())
    if match is None:
        raise HarnessError(f"{arg}: not a stored version; valid forms: N, LINE:N")
    with open_store()() as session:
        return get_version(session, number=int(match["number"]), line=match["line"])
