"""Turning `HatError`s into a report on stderr and exit code 2."""

from __future__ import annotations

import functools
from collections.abc import Callable

import typer

from hat_core.errors import HatError


def exits_on_error(fn: Callable) -> Callable:
    """Wrap a command: a `HatError` prints its full report to stderr and exits 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except HatError as exc:
            typer.echo(exc.report(), err=True)
            raise typer.Exit(code=2) from None

    return wrapper
