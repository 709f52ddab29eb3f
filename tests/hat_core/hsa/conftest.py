"""Fixtures for the HSA tests: the example harnesses, loaded once."""

from __future__ import annotations

import pytest
from hsa_examples import HARNESSES

from hat_core.harness.model import Harness


@pytest.fixture(scope="session")
def v1() -> Harness:
    return HARNESSES["v1"]


@pytest.fixture(scope="session")
def harnesses() -> dict[str, Harness]:
    return HARNESSES
