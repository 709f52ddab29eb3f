"""`benchmarks/demo_base.py`'s `week_parts`: each single-change harness of v2 differs from v1 by
that change alone, and the harness with every rename taken back keeps v2's other changes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from hat_core.harness.io import load_harness

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_base():
    spec = importlib.util.spec_from_file_location("demo_base",
                                                  ROOT / "benchmarks" / "demo_base.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def parts(demo_base, tmp_path_factory):
    harnesses = ROOT / "examples" / "harnesses"
    paths = demo_base.week_parts(harnesses / "v1.yaml", harnesses / "v2.yaml",
                                 tmp_path_factory.mktemp("parts"))
    return {part: load_harness(path) for part, path in paths.items()}


def _names(h):
    return ([t.name for t in h.tools], [s.name for s in h.skills],
            {t.id: t.param_names for t in h.tools})


def _texts(h):
    return ({t.id: t.description for t in h.tools}, {s.id: s.description for s in h.skills})


def test_each_part_changes_only_its_own_kind(parts, examples_dir):
    v1, v2 = load_harness(examples_dir / "v1.yaml"), load_harness(examples_dir / "v2.yaml")
    tools, skills, params = _names(parts["tool names"])
    assert sorted(tools) == sorted(t.name for t in v2.tools)
    assert skills == _names(v1)[1] and params["stock.check"] == ["product_id", "sku"]
    tools, skills, params = _names(parts["parameter names"])
    assert tools == _names(v1)[0] and skills == _names(v1)[1]
    assert params == {t.id: t.param_names for t in v2.tools}
    assert _names(parts["skill names"])[1] == _names(v2)[1]
    assert _names(parts["skill names"])[0] == _names(v1)[0]
    assert _texts(parts["descriptions"]) == _texts(v2)
    assert _names(parts["descriptions"]) == _names(v1)
    assert [t.id for t in parts["tool order"].tools] == [t.id for t in v2.tools]
    assert [t.id for t in v1.tools] != [t.id for t in v2.tools]
    assert sorted(_names(parts["tool order"])[0]) == sorted(_names(v1)[0])


def test_all_but_the_renames_keeps_v2s_other_changes(parts, examples_dir):
    v1, v2 = load_harness(examples_dir / "v1.yaml"), load_harness(examples_dir / "v2.yaml")
    rest = parts["all but the renames"]
    assert _names(rest)[0] == [v1.tool(t.id).name for t in v2.tools]
    assert _names(rest)[1] == _names(v1)[1]
    assert _texts(rest) == _texts(v2) and [t.id for t in rest.tools] == [t.id for t in v2.tools]
