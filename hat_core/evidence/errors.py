"""The errors the evidence package raises: unusable A/B data, a review still open."""

from __future__ import annotations

from hat_core.errors import ConfigError, HatError


class AbDataError(ConfigError):
    """An A/B data file that cannot be analysed; each problem names the column or line."""


class ReviewOpenError(HatError):
    """Unblinding asked for while the blind review is still open."""
