"""The exceptions HAT Ops raises for bad input.

Expected failures inside an episode (a tool call on an unknown product, say) are values,
not exceptions; these classes are for input that cannot be used at all. Every error carries
a list of `Problem`s so a caller can show all of them at once, each with the path it concerns.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where (`skills[2].tools[0]`) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class HatError(Exception):
    """Base class of every error HAT Ops raises on purpose."""

    def __init__(self, message: str, problems: list[Problem] | None = None):
        self.problems = list(problems or [])
        super().__init__(message)

    def report(self) -> str:
        """The message and every problem, one per line."""
        lines = [str(self)]
        lines.extend(f"  - {p}" for p in self.problems)
        return "\n".join(lines)


class HarnessError(HatError):
    """A harness document that cannot be loaded or does not validate."""


class ConfigError(HatError):
    """A configuration file or value that is invalid."""


class NotFoundError(HatError):
    """A version, model, file or record that does not exist."""
