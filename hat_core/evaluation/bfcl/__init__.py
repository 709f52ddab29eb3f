"""BFCL-format tool-call checking.

Modules: `calls` (cases, candidates and per-case verdicts), `values` (value and type matching
of one argument).
"""
