"""The hook-retry policy: the share that keeps the full retry, and what "final only" cuts."""

from __future__ import annotations

import pytest
from data_helpers import tiny_config
from hypothesis import given, settings
from hypothesis import strategies as st

from hat_core.data.retry_policy import apply_retry_policy, final_only
from hat_core.data.rollout import play, training_surfaces, trajectory_of
from hat_core.data.teacher import OracleTeacher
from hat_core.sim.batch import world
from hat_core.sim.binding import bind
from hat_core.sim.episode import episode_from_messages
from hat_core.sim.scoring import score_episode


@pytest.fixture(scope="module")
def played(harness):
    """Each scenario played twice on two surfaces: with a slip and without."""
    catalog, scenarios = world(4, 45)
    surfaces = training_surfaces(harness, tiny_config(variants=1))
    slipped = [play(su, sc, catalog, OracleTeacher(slip_rate=1.0)) for su in surfaces
               for sc in scenarios]
    clean = [play(su, sc, catalog, OracleTeacher(slip_rate=0.0)) for su in surfaces
             for sc in scenarios]
    return slipped, clean


def _visible(messages):
    """What the model reads and writes, without call ids."""
    return [(m["role"], m.get("content"), m.get("reasoning_content"),
             [(c["function"]["name"], c["function"]["arguments"])
              for c in m.get("tool_calls") or ()]) for m in messages]


def test_final_only_leaves_the_conversation_of_a_clean_run(played):
    slipped, clean = played
    pairs = [(s, c) for s, c in zip(slipped, clean, strict=True) if s.episode.retries]
    assert len(pairs) > 40
    for s, c in pairs:
        assert _visible(final_only(s.episode.messages)) == _visible(c.episode.messages)


def test_final_only_keeps_the_rewards(played):
    slipped, _ = played
    for r in slipped:
        if r.episode.retries:
            binding = bind(r.surface.harness, r.surface.binding_map)
            ep = episode_from_messages(final_only(r.episode.messages), binding)
            scores = score_episode(ep, r.scenario, r.surface.harness)
            assert scores.accuracy == r.scores.accuracy
            assert scores.effectiveness == r.scores.effectiveness
            assert not any(m["role"] == "system" for m in ep.messages[1:])


@settings(max_examples=30, deadline=None)
@given(share=st.floats(0, 1), seed=st.integers(0, 10**6))
def test_the_full_retry_share_is_respected(played, share, seed):
    slipped, clean = played
    trajectories = [trajectory_of(r, "oracle") for r in slipped + clean[:20]]
    out, stats = apply_retry_policy(trajectories, share, seed)
    retried = sum(t.retries > 0 for t in trajectories)
    assert stats["retried"] == retried
    assert stats["full"] == round(share * retried)
    assert sum(t.retry_mode == "full" for t in out) == stats["full"]
    assert sum(t.retry_mode == "final_only" for t in out) == retried - stats["full"]
    for before, after in zip(trajectories, out, strict=True):
        if after.retry_mode == "full" or before.retries == 0:
            assert after.messages == before.messages
        else:
            assert len(after.messages) < len(before.messages)


def test_which_trajectories_keep_the_full_retry_does_not_depend_on_order(played):
    slipped, _ = played
    trajectories = [trajectory_of(r, "oracle") for r in slipped]
    forward, _ = apply_retry_policy(trajectories, 0.3, 7)
    backward, _ = apply_retry_policy(trajectories[::-1], 0.3, 7)
    full = {(t.scenario_id, t.variant_id) for t in forward if t.retry_mode == "full"}
    assert full == {(t.scenario_id, t.variant_id) for t in backward if t.retry_mode == "full"}
