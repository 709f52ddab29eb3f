"""`one_thread()`: train with one torch thread in tests (the test machine is small and shared)."""

from __future__ import annotations

from contextlib import contextmanager

import torch


@contextmanager
def one_thread():
    """Set torch to one CPU thread for the block, then restore the previous count."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
