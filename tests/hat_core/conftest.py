"""A tiny randomly initialised Qwen3 model with the project's tokenizer, built once per
session (about 10 s on 2 cores), for the inference, latency and evaluation tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_model import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-qwen3"))
