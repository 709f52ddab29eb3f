"""Fixtures for the base-model tests: one `test`-size build per session, cached in a temp dir."""

from __future__ import annotations

from pathlib import Path

import pytest
from basemodel_threads import one_thread

from hat_core.basemodel import build_base_model, train_tokenizer
from hat_core.basemodel.corpus import generate_corpus, render_sample


@pytest.fixture(scope="session")
def base_cache(tmp_path_factory) -> Path:
    """A cache root laid out like the CLI's: `<root>/base-models/...`."""
    return tmp_path_factory.mktemp("hat-cache")


@pytest.fixture(scope="session")
def test_build(base_cache):
    """The `test`-size base model, seed 0, built once per session into the temp cache."""
    with one_thread():
        return build_base_model(base_cache.parent / "base-test-out", size="test", seed=0,
                                cache_dir=base_cache / "base-models")


@pytest.fixture(scope="session")
def small_tokenizer():
    """A tokenizer trained on 300 corpus samples (vocab 1024)."""
    return train_tokenizer([render_sample(s) for s in generate_corpus(1, 300)], 1024)
