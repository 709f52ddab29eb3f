"""Episodes: determinism, the oracle under any harness, hooks that block, rewrite, hand off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_variants import RENAME_MAP, edit
from hypothesis import given, settings
from hypothesis import strategies as st

from hat_core.harness.io import load_harness
from hat_core.sim.batch import play, simulate, world
from hat_core.sim.binding import bind
from hat_core.sim.episode import AssistantTurn, HookFiring, ToolCall, analyse
from hat_core.sim.judge import verdict_of
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy, RandomPolicy, ScriptedPolicy
from hat_core.sim.runner import run_episode
from hat_core.sim.scenarios import Scenario, TurnTruth
from hat_core.sim.scoring import score_episode

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "harnesses"
COMMENT = Scenario("hand-comment", "comment", None, (
    TurnTruth("主播好可爱！", "comment_reply", "comment", max_chars=40, cta=True),))
ABSOLUTE_MSG = "回复包含广告法禁止的绝对化用语，请改用客观描述后重新回复。"


def _failing(results) -> list[str]:
    return [f"{r.scenario.id}: {r.verdict.failure} {r.verdict.reason}"
            for r in results if not r.verdict.passed]


def test_same_seed_same_episode(v1):
    a = simulate(v1, OraclePolicy(), episodes=30, seed=4)
    b = simulate(v1, OraclePolicy(), episodes=30, seed=4)
    assert [r.episode for r in a] == [r.episode for r in b]


def test_random_policy_is_seeded(v1):
    import random
    a = simulate(v1, RandomPolicy(random.Random(1)), episodes=20, seed=2)
    b = simulate(v1, RandomPolicy(random.Random(1)), episodes=20, seed=2)
    assert [r.episode.messages for r in a] == [r.episode.messages for r in b]


def test_oracle_passes_every_scenario_under_v1(v1):
    results = simulate(v1, OraclePolicy(), episodes=150, seed=0)
    assert _failing(results) == []
    assert all(r.scores.rewards() == {"accuracy": 1.0, "effectiveness": 1.0,
                                      "tool_rationality": 1.0, "skill_selection": 1.0,
                                      "cot_length_penalty": 0.0} for r in results)


def test_oracle_passes_under_the_renamed_harness(renamed):
    results = simulate(renamed, OraclePolicy(), episodes=150, seed=0, rename_map=RENAME_MAP)
    assert _failing(results) == []
    calls = {c["function"]["name"] for r in results for m in r.episode.messages
             for c in m.get("tool_calls") or ()}
    assert calls and all(name.startswith("shop_") for name in calls)
    args = [json.loads(c["function"]["arguments"]) for r in results
            for m in r.episode.messages for c in m.get("tool_calls") or ()
            if c["function"]["name"] == "shop_fetch_price"]
    assert args and all(set(a) == {"item_id"} for a in args)


@pytest.mark.parametrize("version", ["v2", "v3", "v4"])
def test_oracle_passes_under_the_example_versions(version):
    path = EXAMPLES / f"{version}.yaml"
    if not path.is_file():
        pytest.skip(f"{path.name} not written yet")
    assert _failing(simulate(load_harness(path), OraclePolicy(), episodes=60, seed=1)) == []


def test_a_memorising_policy_fails_under_the_renamed_harness(v1, renamed):
    results = simulate(renamed, MemorisingPolicy(v1), episodes=30, seed=0,
                       rename_map=RENAME_MAP)
    failures = {r.verdict.failure for r in results if not r.verdict.passed}
    assert "wrong_tool" in failures
    assert sum(r.verdict.passed for r in results) < 30


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_oracle_passes_for_any_seed(v1, seed):
    assert _failing(simulate(v1, OraclePolicy(), episodes=15, seed=seed)) == []


def test_analyse_reads_back_what_the_runner_recorded(v1, seeded_world):
    catalog, scenarios = seeded_world
    for scenario in scenarios:
        ep = run_episode(v1, scenario, catalog, OraclePolicy())
        declared = [t.skill and bind(v1).skill_names_by_id[t.skill] for t in ep.turns]
        assert analyse(ep.messages, bind(v1), declared) == ep.turns


def test_trajectory_metadata(renamed):
    catalog, scenarios = world(0, 1)
    ep = run_episode(renamed, scenarios[0], catalog, OraclePolicy(), rename_map=RENAME_MAP)
    assert ep.scenario_id == scenarios[0].id
    assert ep.harness_hash == renamed.content_hash()
    assert ep.rename_map == RENAME_MAP
    assert ep.messages[0] == {"role": "system",
                              "content": bind(renamed).rendered.system_prompt}
    assert json.loads(json.dumps(ep.to_dict(), ensure_ascii=False))["scenario_id"]


def test_a_blocking_hook_forces_a_retry_and_both_attempts_are_recorded(v1):
    catalog, _ = world(0, 0)
    policy = ScriptedPolicy([AssistantTurn(content="这是全网最好的直播间，点关注！"),
                             AssistantTurn(content="谢谢宝宝，点点关注～")])
    ep = run_episode(v1, COMMENT, catalog, policy)
    assert ep.hook_firings == (HookFiring("compliance.absolute_claims", "before_response",
                                          "block_retry", ABSOLUTE_MSG, 0, 1),)
    assert ep.retries == 1 and policy.calls == 2
    assert [m["role"] for m in ep.messages] == ["system", "user", "assistant", "system",
                                                "assistant"]
    assert ep.messages[2]["content"] == "这是全网最好的直播间，点关注！"
    assert ep.messages[3]["content"] == ABSOLUTE_MSG
    assert ep.turns[0].reply == "谢谢宝宝，点点关注～"
    assert verdict_of(score_episode(ep, COMMENT, v1)).passed


def test_retries_are_bounded_and_the_breach_is_judged(v1):
    catalog, _ = world(0, 0)
    policy = ScriptedPolicy([AssistantTurn(content="全网最好！点关注")] * 5)
    ep = run_episode(v1, COMMENT, catalog, policy)
    assert [f.attempt for f in ep.hook_firings] == [1, 2, 3]
    assert ep.retries == 2 and policy.calls == 3
    verdict = verdict_of(score_episode(ep, COMMENT, v1))
    assert verdict.failure == "compliance_breach"


def test_an_argument_schema_hook_blocks_the_call(v1):
    catalog, scenarios = world(0, 4)
    price = scenarios[3]
    pid = price.product_id
    policy = ScriptedPolicy([
        AssistantTurn(tool_calls=(ToolCall("c1", "get_price", json.dumps({"product_id": 1})),)),
        AssistantTurn(tool_calls=(ToolCall("c2", "get_price", json.dumps({"product_id": pid})),)),
    ])
    ep = run_episode(v1, price, catalog, policy)
    first, second = ep.turns[0].calls
    assert (first.ok, first.error_type) == (False, "blocked_by_hook")
    assert second.ok
    assert ep.hook_firings[0].hook_id == "tools.argument_check"
    assert ep.hook_firings[0].event == "before_tool_call"
    assert ep.retries == 1
    assert score_episode(ep, price, v1).tool_rationality == 0.75


def test_a_rewrite_hook_replaces_the_words(v1):
    def rewrite(data: dict) -> None:
        hook = next(h for h in data["hooks"] if h["id"] == "compliance.absolute_claims")
        hook["action"] = {"type": "rewrite", "replacement": "很棒"}
    catalog, _ = world(0, 0)
    ep = run_episode(edit(v1, rewrite), COMMENT, catalog,
                     ScriptedPolicy([AssistantTurn(content="全网最好的直播间，点关注！")]))
    assert ep.turns[0].reply == "全网很棒的直播间，点关注！"
    assert [f.action for f in ep.hook_firings] == ["rewrite"]


def test_tool_errors_hand_off_after_the_limit(v1):
    catalog, scenarios = world(0, 1)
    policy = ScriptedPolicy([AssistantTurn(tool_calls=(ToolCall(f"c{i}", "nope", "{}"),))
                             for i in range(4)])
    ep = run_episode(v1, scenarios[0], catalog, policy)
    assert ep.handed_off
    assert ep.hook_firings[-1].hook_id == "tools.error_handoff"
    assert ep.messages[-1] == {"role": "assistant", "content": "系统繁忙，已为您转接人工客服。"}
    assert policy.calls == 2


def test_a_policy_that_never_replies_is_cut_off(v1):
    catalog, scenarios = world(0, 1)
    calls = [AssistantTurn(tool_calls=(ToolCall(f"c{i}", "get_live_promotions", "{}"),))
             for i in range(10)]
    result = play(edit(v1, lambda d: d.update(hooks=[])), scenarios[0], catalog,
                  ScriptedPolicy(calls))
    assert result.episode.turns[0].reply is None
    assert "no_answer" in result.verdict.failures


def test_a_renamed_harness_gives_the_same_tool_results_and_rewards(v1, renamed):
    original = simulate(v1, OraclePolicy(), episodes=30, seed=6)
    variant = simulate(renamed, OraclePolicy(), episodes=30, seed=6, rename_map=RENAME_MAP)
    for a, b in zip(original, variant, strict=True):
        assert ([m["content"] for m in a.episode.messages if m["role"] == "tool"]
                == [m["content"] for m in b.episode.messages if m["role"] == "tool"])
        assert a.scores.rewards() == b.scores.rewards()
