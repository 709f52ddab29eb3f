"""The benchmarks' machine: pin the process to one CPU, so timings see less migration noise.

Imported by the benchmarks as a sibling module (`from machine import one_core`): run as
`python benchmarks/NAME.py`, the script's folder is the first entry of `sys.path`.
"""

from __future__ import annotations

import os


def one_core() -> str:
    """Pin the process to one CPU where the OS allows it (less migration noise); says which."""
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to cpu {cpu}"
    return "not pinned"
