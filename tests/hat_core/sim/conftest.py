"""Fixtures for the simulator tests: the v1 harness, a renamed variant, a seeded world."""

from __future__ import annotations

import pytest
from harness_variants import rename

from hat_core.harness.io import load_harness
from hat_core.harness.model import Harness
from hat_core.sim.batch import world


@pytest.fixture(scope="session")
def v1(v1_path) -> Harness:
    return load_harness(v1_path)


@pytest.fixture(scope="session")
def renamed(v1) -> Harness:
    return rename(v1)


@pytest.fixture(scope="session")
def seeded_world():
    return world(seed=11, episodes=45)
