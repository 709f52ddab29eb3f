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


def _sets(command: list[str]) -> dict[str, str]:
    return dict(command[i + 1].split("=", 1) for i, word in enumerate(command) if word == "--set")


def test_a_replicate_seeds_the_training_run_and_seed_0_keeps_the_first_runs_commands(
        demo_base, tmp_path):
    """`--seed N` reaches the SFT stage's own seed (read by the real config loader);
    seed 0 adds nothing, so the first runs' commands and results stand."""
    from hat_core.training.config import load_stage_config

    first = demo_base.sft(tmp_path / "base", tmp_path / "data", tmp_path / "out", 600, "1e-3",
                          1, 300, "compact-args")
    again = demo_base.sft(tmp_path / "base", tmp_path / "data", tmp_path / "out", 600, "1e-3",
                          1, 300, "compact-args", seed=0)
    replicate = demo_base.sft(tmp_path / "base", tmp_path / "data", tmp_path / "out", 600,
                              "1e-3", 1, 300, "compact-args", seed=2)
    assert again == first and "seed" not in _sets(first)
    config_path = Path(first[first.index("--config") + 1])
    configs = [load_stage_config("sft", config_path, _sets(c), check_paths=False)
               for c in (first, replicate)]
    assert (configs[0].seed, configs[1].seed) == (0, 2)
