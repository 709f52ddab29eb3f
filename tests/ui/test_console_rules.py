"""The console's rules without Streamlit: permissions, menus, release and review
decisions, episode rendering, comparisons, and the Prefect start without a server."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from db.values import BadCase, EvalResult
from hat_core.release.gates import GateCheck, GateResults
from hat_core.release.rules import (
    Candidate,
    ReleaseRefused,
    challenger_of,
    check_actor,
    check_promotion,
    gates_of,
    gates_passed,
    promotion_decision,
    rollback_target,
)
from ui.auth import PERMISSIONS, ROLES, can
from ui.nav import pages_for
from ui.views.episode import episode_blocks
from ui.views.retrain import start_retrain
from ui.views.review import review_decision, training_state
from ui.views.runs import comparison_rows, curve_points


@pytest.mark.parametrize(("role", "allowed"), [
    ("viewer", {"harness.view", "runs.view", "bad_cases.view", "release.view",
                "evidence.view"}),
    ("reviewer", {"harness.view", "runs.view", "bad_cases.view", "release.view",
                  "audit.view", "bad_cases.label", "evidence.view", "pairwise.vote"}),
    ("operator", set(PERMISSIONS) - {"release.override", "users.manage"}),
    ("admin", set(PERMISSIONS)),
    ("intruder", set()),
])
def test_permission_table(role, allowed):
    assert {a for a in PERMISSIONS if can(role, a)} == allowed


def test_unknown_action_lists_the_valid_ones():
    with pytest.raises(KeyError, match="valid: audit.view"):
        can("admin", "release.delete")


def test_menus_by_role():
    titles = {r: {p.title for ps in pages_for(r).values() for p in ps} for r in ROLES}
    assert "Edit and submit" not in titles["viewer"] | titles["reviewer"]
    assert "Edit and submit" in titles["operator"]
    assert "Audit log" not in titles["viewer"] and "Audit log" in titles["reviewer"]
    assert "Users" in titles["admin"] and "Users" not in titles["operator"]


@pytest.mark.parametrize(("role", "gates", "reason", "allowed", "override"), [
    ("reviewer", True, "", False, False),
    ("viewer", True, "", False, False),
    ("operator", True, "", True, False),
    ("operator", False, "urgent", False, False),
    ("admin", False, "", False, False),
    ("admin", False, "hotfix for the compliance bug", True, True),
    ("admin", True, "", True, False),
])
def test_promotion_decision(role, gates, reason, allowed, override):
    decision = promotion_decision(role, gates_passed=gates, override_reason=reason)
    assert (decision.allowed, decision.override) == (allowed, override), decision.message


def flow_gates(**passed: bool) -> dict:
    """Gate results as the retrain flow stores them (`GateResults.to_dict()`)."""
    return GateResults(tuple(GateCheck(n, ok, 0.5, 0.6, f"{n} check")
                             for n, ok in passed.items())).to_dict()


def test_gates_in_the_flows_format():
    assert gates_passed(flow_gates(t1=True, latency=True))
    assert not gates_passed(flow_gates(t1=True, t2=False))
    assert not gates_passed({}) and not gates_passed({"passed": True, "gates": {}})
    assert not gates_passed({"passed": False, "gates": flow_gates(t1=True)["gates"]})
    gates = gates_of(flow_gates(t2=False, t1=True))
    assert [(g.name, g.passed) for g in gates] == [("t1", True), ("t2", False)]
    assert gates[1].detail == "t2 check (value=0.5, threshold=0.6)"
    assert gates_of({"t1": True}) == []  # not what the flows write: no gates


def test_promotion_and_rollback_rules():
    with pytest.raises(ReleaseRefused, match="may not promote"):
        check_actor("vic", "viewer")
    with pytest.raises(ReleaseRefused, match="no user record"):
        check_actor("nobody", None)
    assert check_actor("olga", "operator") == "operator"
    assert check_promotion("operator", version="2", gate_results=flow_gates(t1=True)) is False
    with pytest.raises(ReleaseRefused, match=r"failed its gates \(t2\).*only an admin") as err:
        check_promotion("operator", version="2", gate_results=flow_gates(t1=True, t2=False),
                        override_reason="urgent")
    assert [p.path for p in err.value.problems] == ["gates.t2"]
    with pytest.raises(ReleaseRefused, match="override needs a reason"):
        check_promotion("admin", version="2", gate_results=flow_gates(t2=False),
                        override_reason="  ")
    assert check_promotion("admin", version="2", gate_results=flow_gates(t2=False),
                           override_reason="hotfix") is True
    assert rollback_target(5, 3) == 3
    with pytest.raises(ReleaseRefused, match="no previous champion"):
        rollback_target(5, None)


def test_the_challenger_is_the_newest_passing_version_after_the_champion():
    ok, bad = flow_gates(t1=True), flow_gates(t1=False)
    models = [Candidate(1, ok), Candidate(2, ok), Candidate(3, ok), Candidate(4, bad)]
    assert challenger_of(models, None) == 3
    assert challenger_of(models, 2) == 3
    assert challenger_of(models, 3, previous_id=2) is None  # older ones never come back as B
    assert challenger_of(models, 1, previous_id=3) == 2     # after a rollback from 3 to 1


def test_review_decision():
    assert review_decision("wrong_tool", agree=True, correct_type="pass") == \
        ("confirmed", "wrong_tool")
    assert review_decision("wrong_tool", agree=False, correct_type="pass") == \
        ("dismissed", "pass")
    assert review_decision("wrong_tool", agree=False, correct_type="wrong_arguments") == \
        ("confirmed", "wrong_arguments")


def test_episode_blocks_show_calls_results_and_hooks():
    episode = {
        "messages": [
            {"role": "system", "content": "prompt"},
            {"role": "user", "content": "多少钱？"},
            {"role": "assistant", "content": None, "reasoning_content": "查价格",
             "tool_calls": [{"id": "c1", "type": "function",
                             "function": {"name": "get_price", "arguments": "{\"id\": 1}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "{\"error\": \"not_found\"}"},
            {"role": "assistant", "content": "全网最低价"},
            {"role": "system", "content": "不要使用绝对化用语"},
        ],
        "hook_firings": [{"hook_id": "no_absolute", "event": "before_response",
                          "action": "block_retry", "message": "m", "turn": 0, "attempt": 0}],
    }
    kinds = [(b.kind, b.title) for b in episode_blocks(episode)]
    assert kinds == [("prompt", "System prompt"), ("user", "User"),
                     ("assistant", "Reasoning"), ("tool_call", "Calls get_price"),
                     ("tool", "Result of get_price (failed)"), ("assistant", "Assistant"),
                     ("system", "Hook message (retry)"),
                     ("hook", kinds[-1][1])]
    assert "no_absolute" in kinds[-1][1]


def _result(suite, metric, value):
    return EvalResult(0, 0, None, suite, metric, value, "", None)


def test_comparison_rows_with_missing_metrics():
    rows = comparison_rows([_result("t1", "acc", 0.5)],
                           [_result("t1", "acc", 0.75), _result("t2", "acc", 0.6)],
                           a_label="A", b_label="B")
    assert rows == [{"suite": "t1", "metric": "acc", "A": 0.5, "B": 0.75, "delta": 0.25},
                    {"suite": "t2", "metric": "acc", "A": None, "B": 0.6, "delta": None}]


def test_curve_points_spread_over_steps():
    from datetime import UTC, datetime

    from db.values import StageRunInfo

    stage = StageRunInfo(1, 1, "hsa_rl", "", {"steps": 100, "loss": 0.1,
                                             "rewards/accuracy/mean": [0.1, 0.2]}, "",
                         datetime.now(UTC))
    assert curve_points([stage]) == [
        {"stage": "hsa_rl", "metric": "rewards/accuracy/mean", "step": 0, "value": 0.1},
        {"stage": "hsa_rl", "metric": "rewards/accuracy/mean", "step": 50, "value": 0.2}]


def test_start_retrain_without_prefect_says_why():
    result = start_retrain(line="l", number=1, actor="ann", api_url=None)
    assert not result.ok and "HAT_PREFECT_API_URL" in result.message
    down = start_retrain(line="l", number=1, actor="ann", api_url="http://127.0.0.1:9/api")
    assert not down.ok and "not reachable" in down.message


def test_training_state_says_where_a_sent_case_stands():
    now = datetime(2026, 12, 6, tzinfo=UTC)
    case = BadCase(id=1, episode={}, harness_version_id=1, model_version_id=None,
                   failure_type="wrong_tool", judge_scores={}, review_state="confirmed",
                   label="wrong_tool", comment="", send_to_training=False, reviewer="rita",
                   reviewed_at=now, created_at=now)
    sent = dataclasses.replace(case, send_to_training=True)
    assert (training_state(case), training_state(sent)) == ("-", "sent")
    assert training_state(dataclasses.replace(
        sent, consumed_by_build="3f2a9c1b0d4e", consumed_by_job_id=7,
        consumed_at=now)) == "in data 3f2a9c1b0d4e (job 7)"
    assert training_state(dataclasses.replace(sent, consumed_by_build="3f2a9c1b0d4e")) == \
        "in data 3f2a9c1b0d4e"
