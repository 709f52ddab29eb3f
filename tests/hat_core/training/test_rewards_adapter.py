"""The simulator's rewards through the GRPO adapter, the per-variant environments and the
flat-group count (no model needed)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from hat_core.harness.io import load_harness
from hat_core.sim.batch import world
from hat_core.sim.policy import OraclePolicy
from hat_core.sim.runner import run_episode
from hat_core.sim.scoring import score_episode
from hat_core.training.rewards_adapter import (
    FlatGroups,
    batch_rewards,
    reward_functions,
    sim_trajectory,
)
from hat_core.training.rl_env import (
    environment_factories,
    rl_rows,
    select_scenarios,
    variant_pool,
)

MINI_HARNESS = Path(__file__).resolve().parents[3] / "examples" / "configs" / "rl_mini_harness.yaml"


@pytest.fixture(scope="module")
def mini():
    harness = load_harness(MINI_HARNESS)
    catalog, scenarios = world(0, 30)
    price = next(s for s in scenarios if s.kind == "price")
    return harness, catalog, price


def _trl_style(messages: list[dict]) -> tuple[list[dict], list[dict]]:
    """A simulator trajectory as TRL hands it to reward functions: prompt + completion, call
    arguments as dicts, tool messages without ids."""
    prompt, completion = messages[:2], []
    for m in messages[2:]:
        if m["role"] == "assistant":
            out = {"role": "assistant", "content": m["content"]}
            if m.get("reasoning_content"):
                out["content"] = f"<think>\n{m['reasoning_content']}\n</think>\n\n{m['content']}"
            if m.get("tool_calls"):
                out["tool_calls"] = [{"type": "function", "function": {
                    "name": c["function"]["name"],
                    "arguments": json.loads(c["function"]["arguments"])}}
                    for c in m["tool_calls"]]
            completion.append(out)
        elif m["role"] == "tool":
            completion.append({"role": "tool", "name": "x", "content": m["content"]})
    return prompt, completion


def _columns(harness, scenario, n=1) -> dict:
    return {"scenario": [json.dumps(scenario.to_dict(), ensure_ascii=False)] * n,
            "harness": [json.dumps(harness.model_dump(mode="json"), ensure_ascii=False)] * n,
            "rename_map": ["{}"] * n}


def test_a_trl_rollout_scores_like_the_simulator_episode(mini):
    harness, catalog, scenario = mini
    episode = run_episode(harness, scenario, catalog, OraclePolicy())
    expected = score_episode(episode, scenario, harness).rewards()
    prompt, completion = _trl_style(list(episode.messages))
    messages = sim_trajectory(prompt, completion)
    assert [m["role"] for m in messages] == [m["role"] for m in episode.messages]
    assert messages[3]["tool_call_id"] == messages[2]["tool_calls"][0]["id"]
    got = batch_rewards([prompt], [completion], **_columns(harness, scenario))[0]
    assert got == expected | {"cot_length_penalty": -expected["cot_length_penalty"]}
    assert got["accuracy"] == 1.0


def test_length_penalty_is_negative_and_linear(mini):
    harness, _, scenario = mini
    prompt = [{"role": "system", "content": "s"},
              {"role": "user", "content": scenario.turns[0].user}]
    for tokens, penalty in ((90, 0.0), (150, -0.5), (260, -1.0)):
        completion = [{"role": "assistant",
                       "content": "<think>\n" + " ".join(["w"] * tokens) + "\n</think>\n\n好的～"}]
        fns = reward_functions({"cot_length_penalty": 1.0, "accuracy": 1.0})
        assert fns[0].__name__ == "cot_length_penalty"
        assert fns[0]([prompt], [completion], **_columns(harness, scenario)) == [penalty]


def test_one_reward_function_per_reward_scores_the_batch_once(mini, monkeypatch):
    harness, catalog, scenario = mini
    import hat_core.training.rewards_adapter as adapter

    calls = []
    real = adapter.batch_rewards
    monkeypatch.setattr(adapter, "batch_rewards", lambda *a, **k: calls.append(1) or real(*a, **k))
    weights = {"accuracy": 1.0, "effectiveness": 1.0, "tool_rationality": 1.0,
               "skill_selection": 1.0, "cot_length_penalty": 1.0}
    fns = reward_functions(weights)
    assert [f.__name__ for f in fns] == list(weights)
    episode = run_episode(harness, scenario, catalog, OraclePolicy())
    prompt, completion = _trl_style(list(episode.messages))
    completions = [completion]
    values = [f([prompt], completions, **_columns(harness, scenario))[0] for f in fns]
    assert values == [1.0, 1.0, 1.0, 1.0, 0.0] and len(calls) == 1


def test_flat_groups_grpo_and_gdpo():
    weights = {"a": 1.0, "b": 1.0}
    same_total = [{"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0}]
    constant = [{"a": 0.5, "b": 0.5}, {"a": 0.5, "b": 0.5}]
    varied = [{"a": 1.0, "b": 1.0}, {"a": 0.0, "b": 0.0}]
    grpo = FlatGroups(2, weights, "grpo")
    assert grpo.observe(same_total + constant + varied) == (2, 3)
    gdpo = FlatGroups(2, weights, "gdpo")
    assert gdpo.observe(same_total + constant + varied) == (1, 3)
    assert gdpo.summary() == {"flat_groups": 1, "groups": 3, "flat_group_share": 0.3333}


def test_flat_groups_are_logged_through_trl_log_metric(mini):
    harness, _, scenario = mini
    flat = FlatGroups(2, {"accuracy": 1.0}, "gdpo")
    logged = {}
    fn = reward_functions({"accuracy": 1.0}, flat)[0]
    prompt = [{"role": "user", "content": "hi"}]
    fn([prompt, prompt], [[{"role": "assistant", "content": "a"}]] * 2,
       log_metric=lambda k, v: logged.setdefault(k, v), **_columns(harness, scenario, 2))
    assert logged == {"flat_groups/count": 1.0, "flat_groups/share": 1.0}


def test_each_variant_gets_an_environment_with_its_tool_names(mini):
    harness, catalog, scenario = mini
    pool = variant_pool(harness, 3, seed=0)
    assert [e.name for e in pool] == ["original", "v000", "v001", "v002"]
    factories = environment_factories(pool, catalog)
    product = scenario.turns[0].required[0].args["product_id"]
    for entry in pool:
        env = factories[entry.name]()
        env.reset()
        tool = entry.binding.tools_by_id["product.price"]
        param = next(iter(entry.harness.tool("product.price").parameters["properties"]))
        result = json.loads(getattr(env, tool.name)(**{param: product}))
        assert "error" not in result and env.calls[0][0] == tool.name
        bad = json.loads(getattr(env, tool.name)(wrong=1))
        assert bad["error"] == "bad_arguments"


def test_rows_draw_variants_and_carry_reward_columns(mini):
    harness, catalog, _ = mini
    pool = variant_pool(harness, 3, seed=0)
    _, scenarios = world(0, 60)
    chosen = select_scenarios(scenarios, ["price", "comment"], single_turn_only=True)
    rows = rl_rows(pool, chosen, random.Random(0))
    assert len(rows) == 8 and {r["environment"] for r in rows} <= {e.name for e in pool}
    assert len({r["environment"] for r in rows}) > 1
    row = rows[0]
    entry = next(e for e in pool if e.name == row["environment"])
    assert row["prompt"][0]["content"] == entry.binding.rendered.system_prompt
    assert json.loads(row["rename_map"]) == entry.rename_map


def test_the_rl_pool_gives_hints_the_binding_accepts_on_an_edited_base():
    from hat_core.harness.io import load_harness
    from hat_core.training.rl_env import variant_pool

    v2 = load_harness(MINI_HARNESS.parents[1] / "harnesses" / "v2.yaml")
    pool = variant_pool(v2, 8, seed=0, include_original=False)
    assert any(entry.rename_map for entry in pool)
    assert [dict(e.binding.refused_hints) for e in pool] == [{}] * len(pool)
