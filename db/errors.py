"""Errors the SQL store raises on purpose (the CLI turns them into exit code 2)."""

from __future__ import annotations

from hat_core.errors import HatError


class StoreError(HatError):
    """A request the store refuses: an invalid state change, an unknown role, ..."""


class NotMigratedError(StoreError):
    """The database schema is not at the head revision; run `hat db upgrade`."""


class ReviewClosedError(StoreError):
    """A vote on (or a second close of) a pairwise review that is already closed."""
