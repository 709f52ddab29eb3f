"""Fixtures for the data tests: the v1 harness and one tiny dataset built once per session."""

from __future__ import annotations

import pytest
from data_helpers import tiny_config, v1

from hat_core.data.build import BuildResult, build


@pytest.fixture(scope="session")
def harness():
    return v1()


@pytest.fixture(scope="session")
def built(tmp_path_factory, harness) -> BuildResult:
    """A tiny dataset directory (30 scenarios x original + 2 variants, oracle teacher)."""
    return build(harness, tiny_config(), tmp_path_factory.mktemp("data") / "ds")
