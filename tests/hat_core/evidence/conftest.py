"""Helpers for the evidence tests: one simulated experiment through the whole pipeline."""

from __future__ import annotations

import pytest

from hat_core.evidence.ab import AbConfig, AbReport, analyze
from hat_core.evidence.ab_data import validate_ab_frame
from hat_core.evidence.simulate import simulate_ab


def experiment(seed: int, *, metrics=("gmv",), config: AbConfig | None = None,
               **sim) -> AbReport:
    """Simulate (seeded), validate and analyse; stability off unless the config turns it on."""
    frame = simulate_ab(seed, **sim)
    data = validate_ab_frame(frame, metrics=metrics)
    return analyze(data, config or AbConfig(bootstrap=0, stability=False, seed=seed))


@pytest.fixture(scope="session")
def run_experiment():
    return experiment
