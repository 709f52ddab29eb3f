"""The oracle's long-reasoning mode and the CoT penalty's limits that scale with it."""

from __future__ import annotations

import re

import pytest

from hat_core.sim.batch import simulate
from hat_core.sim.episode import count_tokens
from hat_core.sim.policy import OraclePolicy
from hat_core.sim.scoring import (
    CotLimits,
    active_cot_limits,
    cot_penalty,
    scaled_cot_limits,
    use_cot_limits,
)

EPISODES = 30  # every scenario kind twice
ROOMY = CotLimits(1000, 2000)  # no penalty: judge the calls and replies alone


def _reasonings(results) -> list[str]:
    return [m["reasoning_content"] for r in results for m in r.episode.messages
            if m["role"] == "assistant" and m.get("reasoning_content")]


@pytest.mark.parametrize("budget", [60, 150])
def test_long_reasoning_reaches_its_budget_and_the_oracle_still_passes(v1, budget):
    with use_cot_limits(ROOMY):
        results = simulate(v1, OraclePolicy(reasoning_tokens=budget), episodes=EPISODES,
                           seed=0)
    lengths = [count_tokens(t) for t in _reasonings(results)]
    assert lengths and min(lengths) >= budget
    assert max(lengths) <= budget + 60  # at most one sentence past the budget
    assert [r.scenario.id for r in results if not r.verdict.passed] == []


def test_short_mode_is_unchanged_and_far_under_the_default_penalty(v1):
    results = simulate(v1, OraclePolicy(), episodes=EPISODES, seed=0)
    assert max(count_tokens(t) for t in _reasonings(results)) < 40
    assert all(r.scores.cot_penalty == 0 for r in results)


def test_the_deliberation_names_the_tool_and_arguments_of_the_harness_it_is_shown(renamed):
    results = simulate(renamed, OraclePolicy(reasoning_tokens=120), episodes=EPISODES,
                       seed=0)
    checked = 0
    for r in results:
        for m in r.episode.messages:
            for call in m.get("tool_calls") or ():
                name = call["function"]["name"]
                assert renamed.tool_by_name(name) is not None
                assert name in m["reasoning_content"]
                checked += 1
    assert checked >= 20


def test_a_long_reasoning_student_is_penalised_under_limits_scaled_to_its_teacher(v1):
    """A 90-token deliberation is free under the default 100 / 200 and fully penalised
    under the limits scaled to a 90-token teacher (30 / 60): the penalty can bite."""
    policy = OraclePolicy(reasoning_tokens=90)
    free = simulate(v1, policy, episodes=15, seed=1)
    with use_cot_limits(scaled_cot_limits(90)):
        bitten = simulate(v1, policy, episodes=15, seed=1)
    assert max(r.scores.cot_penalty for r in free) < 1.0
    assert all(r.scores.cot_penalty == 1.0 for r in bitten)
    assert all("over_long_reasoning" in r.verdict.failures for r in bitten)


def test_limits_scale_in_the_reports_proportion_and_restore_after_the_block():
    assert scaled_cot_limits(300) == CotLimits(100, 200)
    assert scaled_cot_limits(90) == CotLimits(30, 60)
    assert scaled_cot_limits(1) == CotLimits(1, 2)
    before = active_cot_limits()
    with use_cot_limits(CotLimits(10, 20)):
        assert cot_penalty(15) == 0.5
    assert active_cot_limits() == before and cot_penalty(150) == 0.5
    with pytest.raises(ValueError, match="free < full"):
        CotLimits(50, 50)
    with pytest.raises(ValueError, match="reasoning_tokens"):
        OraclePolicy(reasoning_tokens=-1)


@pytest.mark.parametrize("profile", ["compact", "compact-args-long"])
def test_the_anchored_plan_quotes_names_as_their_prompt_lines_show_them(examples_dir, profile):
    # on v2 (renamed and re-described tools and skills): each quoted `description: name`
    # is a verbatim piece of the system prompt, so a model can copy the name that follows
    # the description there; the calls and the declared skills stay the plain plan's
    from hat_core.evaluation.policy import mentioned_skill
    from hat_core.harness.io import load_harness
    from hat_core.harness.render import render, use_profile

    v2 = load_harness(examples_dir / "v2.yaml")

    with use_profile(profile), use_cot_limits(ROOMY):
        prompt = render(v2).system_prompt
        plain = simulate(v2, OraclePolicy(), episodes=EPISODES, seed=0)
        anchored = simulate(v2, OraclePolicy(plan="anchored"), episodes=EPISODES, seed=0)
    quoted = [q for t in _reasonings(anchored) for q in re.findall(r"【([^】]+)】", t)]
    assert len(quoted) > EPISODES  # a skill and a tool before every call
    assert [q for q in quoted if f"- {q}" not in prompt] == []
    skills = [s.name for s in v2.skills]
    for a, p in zip(anchored, plain, strict=True):
        assert a.verdict.passed and p.verdict.passed
        calls = [[c["function"]["name"] for c in m.get("tool_calls") or ()]
                 for m in a.episode.messages if m["role"] == "assistant"]
        assert calls == [[c["function"]["name"] for c in m.get("tool_calls") or ()]
                         for m in p.episode.messages if m["role"] == "assistant"]
        said = [mentioned_skill(m.get("reasoning_content", ""), skills)
                for m in a.episode.messages if m["role"] == "assistant"]
        assert said == [mentioned_skill(m.get("reasoning_content", ""), skills)
                        for m in p.episode.messages if m["role"] == "assistant"]


def test_an_unknown_plan_style_is_refused():
    with pytest.raises(ValueError, match="plan must be"):
        OraclePolicy(plan="quoted")
