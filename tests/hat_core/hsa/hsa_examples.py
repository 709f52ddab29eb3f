"""The example harnesses, loaded once for the HSA tests."""

from __future__ import annotations

from pathlib import Path

from hat_core.harness.io import load_harness
from hat_core.harness.model import Harness

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "harnesses"
VERSIONS = ("v1", "v2", "v3", "v4")
HARNESSES: dict[str, Harness] = {v: load_harness(EXAMPLES / f"{v}.yaml") for v in VERSIONS}
