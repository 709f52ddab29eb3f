"""Test folders have no __init__.py, so pytest imports test modules by basename: two modules
with one basename break collection. Keep every test and helper module name unique."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_test_module_basenames_are_unique():
    names = Counter(p.name for p in TESTS.rglob("*.py")
                    if p.name not in {"conftest.py", "__init__.py"}
                    and "__pycache__" not in p.parts)
    assert [n for n, c in names.items() if c > 1] == []
