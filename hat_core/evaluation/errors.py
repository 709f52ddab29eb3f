"""Errors of evaluation inputs: a file or row that cannot be used, a judge the gate refuses."""

from __future__ import annotations

from hat_core.errors import HatError


class EvalInputError(HatError):
    """An evaluation input file or row that cannot be used; problems name `file:line`."""


class JudgeGateError(HatError):
    """An LLM judge that the judge gate refuses: too little or too poor human agreement."""
