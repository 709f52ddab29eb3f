"""The error raised for evaluation inputs that cannot be used (a missing file, a bad row)."""

from __future__ import annotations

from hat_core.errors import HatError


class EvalInputError(HatError):
    """An evaluation input file or row that cannot be used; problems name `file:line`."""
