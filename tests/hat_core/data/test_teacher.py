"""Teachers: the oracle's seeded slips and recoveries, the LLM teacher's retries and pool."""

from __future__ import annotations

import pytest
from data_helpers import ScriptedLLMTeacher, record_script, tiny_config

from hat_core.data.config import TeacherConfig
from hat_core.data.rejection import select
from hat_core.data.rollout import play, play_all, training_surfaces
from hat_core.data.teacher import OracleTeacher, Teacher, TeacherError, make_teacher
from hat_core.sim.batch import world
from hat_core.sim.policy import Policy


@pytest.fixture(scope="module")
def bank():
    return world(3, 30)


def test_every_teacher_is_a_simulator_policy():
    assert issubclass(Teacher, Policy)
    assert isinstance(make_teacher(TeacherConfig()), OracleTeacher)
    teacher = make_teacher(TeacherConfig(kind="openai", base_url="http://x", model="m",
                                         concurrency=8))
    assert teacher.concurrency == 8 and teacher.name == "m"


def test_oracle_slips_trip_a_hook_and_recover(harness, bank):
    catalog, scenarios = bank
    teacher = OracleTeacher(slip_rate=1.0, seed=0)
    surface = training_surfaces(harness, tiny_config(variants=0))[0]
    rollouts = [play(surface, sc, catalog, teacher) for sc in scenarios]
    retried = [r for r in rollouts if r.episode.retries]
    assert len(retried) >= len(scenarios) * 0.8
    firings = {f.hook_id for r in retried for f in r.episode.hook_firings}
    assert firings == {"compliance.absolute_claims", "tools.argument_check"}
    assert all(r.scores.accuracy == 1.0 and r.scores.effectiveness >= 0.75 for r in retried)


def test_no_slips_at_rate_zero(harness, bank):
    catalog, scenarios = bank
    surface = training_surfaces(harness, tiny_config(variants=0))[0]
    teacher = OracleTeacher(slip_rate=0.0)
    assert not any(play(surface, sc, catalog, teacher).episode.retries for sc in scenarios)


def test_the_llm_teacher_retries_failed_requests(harness, bank):
    catalog, scenarios = bank
    surface = training_surfaces(harness, tiny_config(variants=0))[0]
    script = record_script(harness, scenarios[:1], catalog, {})
    teacher = ScriptedLLMTeacher(script, fail_first=2, retries=2)
    rollout = play(surface, scenarios[0], catalog, teacher)
    assert rollout.error is None and rollout.scores.accuracy == 1.0
    assert teacher.requests >= 3


def test_a_teacher_that_keeps_failing_is_a_rejected_rollout(harness, bank):
    catalog, scenarios = bank
    surface = training_surfaces(harness, tiny_config(variants=0))[0]
    teacher = ScriptedLLMTeacher({}, fail_first=100, retries=1)
    rollout = play(surface, scenarios[0], catalog, teacher)
    assert rollout.episode is None and "failed 2 time(s)" in rollout.error
    kept, rejected = select([rollout], tiny_config().rejection)
    assert kept == [] and rejected["teacher_error"] == 1
    with pytest.raises(TeacherError):
        teacher._answer([], [])


def test_concurrency_does_not_change_the_result(harness, bank):
    catalog, scenarios = bank
    surfaces = training_surfaces(harness, tiny_config(variants=1))
    script = record_script(harness, scenarios, catalog, {})
    one = play_all(surfaces[:1], scenarios, catalog, ScriptedLLMTeacher(script, concurrency=1))
    four = play_all(surfaces[:1], scenarios, catalog, ScriptedLLMTeacher(script, concurrency=4))
    assert [r.episode.messages for r in one] == [r.episode.messages for r in four]
    assert all(r.scores.accuracy == 1.0 for r in four)
