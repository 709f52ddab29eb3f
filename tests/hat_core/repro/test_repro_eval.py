"""The repro's evaluation of one arm, played for real by the oracle: each seed on its own eval
world, T2 on the operator's own edit (v2) as its own suite, the per-case outcomes and family
counts kept in the results, and the config's eval budget (every IFEval prompt by default)."""

from __future__ import annotations

import pytest

from hat_core.errors import ConfigError
from hat_core.evaluation.cases import eval_world
from hat_core.repro.config import load_repro_config
from hat_core.repro.outcomes import case_outcomes, family_counts, instruction_family
from hat_core.repro.run import evaluate_policy
from hat_core.sim.policy import OraclePolicy


@pytest.fixture(scope="module")
def config(examples_dir):
    root = examples_dir.parent.parent
    return load_repro_config(root / "examples" / "configs" / "repro_quick.yaml", {
        "harness": str(root / "examples" / "harnesses" / "v1.yaml"),
        "edits": [str(root / "examples" / "harnesses" / f"v{i}.yaml") for i in (2, 3)],
        "eval.suites": ["t1", "t2", "t2_edit"], "eval.episodes": 4, "eval.variants": 2,
        "eval.edit_episodes": 2})


@pytest.fixture(scope="module")
def played(config, tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    return {seed: evaluate_policy(config, OraclePolicy(), "oracle", config.eval_seed_of(seed),
                                  out / f"seed{seed}") for seed in (0, 1)}


def test_each_seed_plays_its_own_eval_world(config):
    assert [config.eval_seed_of(s) for s in (0, 1, 2)] == [0, 1, 2]
    pinned = load_repro_config(None, {"eval.seed": 7})
    assert [pinned.eval_seed_of(s) for s in (0, 1)] == [7, 7]
    (cat0, sc0), (cat1, sc1) = eval_world(0, 4), eval_world(1, 4)
    assert [s.kind for s in sc0] == [s.kind for s in sc1]  # stratified alike
    assert [p.price for p in cat0.products] != [p.price for p in cat1.products]
    assert [t.user for s in sc0 for t in s.turns] != [t.user for s in sc1 for t in s.turns]


def test_the_arm_evaluation_plays_the_world_it_is_given(played):
    first, second = played[0], played[1]
    assert first["eval_seed"] == 0 and second["eval_seed"] == 1
    viewer = {}
    for seed, result in played.items():
        rows = [r for f in result["cases"] if f.endswith("oracle.cases.jsonl")
                for r in _rows(f) if r["suite"] == "t1"]
        viewer[seed] = [r["viewer"] for r in rows]
        _, scenarios = eval_world(seed, 4)
        assert viewer[seed] == [[t.user for t in s.turns] for s in scenarios]
    assert viewer[0] != viewer[1]


def test_t2_on_the_operators_edit_is_its_own_suite(played):
    result = played[0]
    metrics = result["metrics"]
    assert metrics["t2_edit.pass_rate"] == 1.0 and metrics["t2_edit.first_call_exact"] == 1.0
    rows = [r for f in result["cases"] if f.endswith("oracle.t2_edit.cases.jsonl")
            for r in _rows(f)]
    assert len(rows) == 4 and {r["group"] for r in rows} == {"v2"}
    assert {r["case_id"].split("/")[1] for r in rows} == {"v2"}
    assert result["outcomes"]["t2_edit"]["passed"] == "1111"
    assert set(result["edits"]) == {"v2", "v3"}  # the bad-case check still plays every edit


def test_outcomes_and_families_are_read_off_the_rows(played):
    result = played[0]
    t1 = result["outcomes"]["t1"]
    assert len(t1["case_ids"]) == 4 and t1["passed"] == "1111"
    assert set(t1) == {"case_ids", "passed", "first_tool_right", "first_call_exact",
                       "all_calls_exact"}
    assert len(result["outcomes"]["t2"]["case_ids"]) == 8
    kinds = result["families"]["t1.kind"]
    assert sum(k["cases"] for k in kinds.values()) == 4
    variants = result["families"]["t2.variant"]
    assert set(variants) == {"h000", "h001"} and all(v["cases"] == 4 for v in variants.values())
    assert all(v["transforms"] for v in variants.values())


def test_ifeval_families_count_instructions_and_prompts():
    rows = [{"suite": "ifeval", "case_id": "ifeval/1", "passed": False,
             "instruction_id_list": ["length_constraints:number_words",
                                     "length_constraints:number_sentences",
                                     "detectable_format:title"],
             "strict_instructions": [True, False, True]},
            {"suite": "ifeval", "case_id": "ifeval/2", "passed": True,
             "instruction_id_list": ["detectable_format:title"], "strict_instructions": [True]}]
    assert instruction_family("change_case:english_lowercase") == "change_case"
    assert family_counts(rows)["ifeval.family"] == {
        "detectable_format": {"instructions": 2, "followed": 2, "prompts": 2,
                              "prompts_passed": 1},
        "length_constraints": {"instructions": 2, "followed": 1, "prompts": 1,
                               "prompts_passed": 0}}
    assert case_outcomes(rows)["ifeval"] == {"case_ids": ["ifeval/1", "ifeval/2"],
                                             "passed": "01"}


def test_ifeval_uses_every_prompt_unless_capped(examples_dir):
    configs = examples_dir.parent / "configs"
    assert load_repro_config(configs / "repro_full.yaml").eval.ifeval_prompts is None
    assert load_repro_config(configs / "repro_quick.yaml").eval.ifeval_prompts == 2
    with pytest.raises(ConfigError) as err:
        load_repro_config(None, {"eval.ifeval_prompts": 0, "edits": [],
                                 "eval.suites": ["t2_edit"]})
    assert "eval.ifeval_prompts" in err.value.report() and "t2_edit" in err.value.report()


def _rows(path: str) -> list[dict]:
    import json
    from pathlib import Path

    return [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]


@pytest.mark.parametrize("name", ["repro_full.yaml", "repro_quick.yaml"])
def test_every_stage_config_of_the_shipped_repro_configs_loads(name, examples_dir, tmp_path,
                                                               monkeypatch):
    """What each stage of a run would train with, typed and validated without training: the
    full config is the CPU recipe (packed SFT rows, the data_cpu builds, opd_cpu, rl_cpu)."""
    from hat_core.repro.run import data_config_of, stage_config_of

    root = examples_dir.parent.parent
    monkeypatch.chdir(root)
    config = load_repro_config(root / "examples" / "configs" / name)
    hsa, fixed = data_config_of(config, 1, fixed=False), data_config_of(config, 1, fixed=True)
    assert hsa.seed == fixed.seed == 1 and fixed.variants == 0 and hsa.variants > 0
    base = root / "examples" / "models" / "toy-long"
    data = tmp_path / "data"
    (data / "opd").mkdir(parents=True)
    sft = stage_config_of(config, "sft", 1, base, tmp_path / "sft", {"dataset": str(data)}, base)
    opd = stage_config_of(config, "opd", 1, base, tmp_path / "opd", {"prompts": str(data)}, base)
    rl = stage_config_of(config, "rl", 1, base, tmp_path / "rl", {"harness": config.harness},
                         base)
    assert sft.max_steps == config.sft["max_steps"] and str(opd.teacher) == str(base)
    assert rl.max_steps == config.rl["max_steps"] and sft.num_threads == config.threads
    if name == "repro_full.yaml":
        assert config.base_model == "examples/models/toy-long" and sft.pack
        assert (hsa.variants, hsa.scenarios_per_surface, fixed.scenarios_per_surface) == (
            1500, 6, 0)
        assert config.eval.episodes >= 30 and config.eval.variants >= 4
        assert "t2_edit" in config.eval.suites and config.eval.seed is None
