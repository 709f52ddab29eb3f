"""The reference data in ../shared/data beside the repository, for the evaluation tests.

`shared(path)` skips a test when the data is missing, and fails it when `CI` is set (CI always
has shared/ beside the clone).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
NLTK_DATA = SHARED / "nltk_data"
IFEVAL = SHARED / "ifeval"


def shared(path: Path) -> Path:
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing (CI is set: shared data must be beside the repo)")
        pytest.skip(f"{path} is missing")
    return path


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path
