"""Property-based fuzz of the loader: any input gives a valid Harness or a HarnessError."""

from __future__ import annotations

import copy

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hat_core.errors import HarnessError
from hat_core.harness.io import harness_from_data, parse_harness
from hat_core.harness.model import Harness

FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                    st.text(max_size=20))
json_like = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(st.text(max_size=10), inner, max_size=5)),
    max_leaves=40,
)


def loads_or_harness_error(fn, *args) -> None:
    try:
        result = fn(*args)
    except HarnessError as exc:
        assert str(exc)
        return
    assert isinstance(result, Harness)


@FUZZ
@given(st.text(max_size=400))
def test_any_text(text):
    loads_or_harness_error(parse_harness, text)


@FUZZ
@given(json_like)
def test_any_structure(data):
    loads_or_harness_error(harness_from_data, data)


@FUZZ
@given(json_like)
def test_any_structure_as_yaml_text(data):
    loads_or_harness_error(parse_harness, yaml.safe_dump(data, allow_unicode=True))


@pytest.fixture(scope="module")
def v1_data(v1_path):
    return yaml.safe_load(v1_path.read_text(encoding="utf-8"))


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


@FUZZ
@given(data=st.data())
def test_mutated_example(v1_data, data):
    """Replace or delete one node anywhere in v1: still a Harness or a HarnessError."""
    doc = copy.deepcopy(v1_data)
    paths = [p for p in _paths(doc) if p]
    path = data.draw(st.sampled_from(paths))
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    if data.draw(st.booleans()):
        parent[path[-1]] = data.draw(json_like)
    elif isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent.pop(path[-1])
    loads_or_harness_error(harness_from_data, doc)
