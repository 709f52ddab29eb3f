"""Review items from two runs' case rows: real evaluations (oracle against a policy that
memorised v1, both on v2) give the cases both played, readable prompts and responses, the
rule judge's pairwise verdict, a seeded sample, and errors that say what and where."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hat_core.errors import ConfigError
from hat_core.evaluation.evaluate import EvalOptions, case_rows, evaluate
from hat_core.evidence.review_from_runs import (
    judge_verdict,
    render_prompt,
    render_response,
    review_items_from_cases,
)
from hat_core.harness.io import load_harness
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "harnesses"


def rows(policy, episodes: int, seed: int = 0, suites=("t1", "t2")) -> list[dict]:
    report = evaluate(policy, load_harness(EXAMPLES / "v2.yaml"), list(suites),
                      EvalOptions(episodes=episodes, variants=1, seed=seed))
    return case_rows(report)


@pytest.fixture(scope="module")
def oracle_rows():
    return rows(OraclePolicy(), 6)


@pytest.fixture(scope="module")
def memorising_rows():
    return rows(MemorisingPolicy(load_harness(EXAMPLES / "v1.yaml")), 8)


def test_items_are_the_cases_both_runs_played(oracle_rows, memorising_rows):
    items = review_items_from_cases(oracle_rows, memorising_rows, source_a="oracle",
                                    source_b="memorising", with_judge=True)
    assert [i.scenario_id for i in items] == [r["case_id"] for r in oracle_rows]  # 6 of 8
    assert len(items) == 12 and items[0].scenario_id.startswith("t1/")
    assert all(i.prompt.startswith("viewer") for i in items)
    assert all("reply: " in i.response_a for i in items)
    assert any("tool call: " in i.response_a and "tool result: " in i.response_a for i in items)
    assert any(i.response_a != i.response_b for i in items)
    by_case = {r["case_id"]: r for r in memorising_rows}
    for item, a in zip(items, oracle_rows, strict=True):
        assert item.judge == judge_verdict(a["passed"], by_case[a["case_id"]]["passed"])
    assert {"a", "tie"} <= {i.judge for i in items}  # the memoriser fails some renamed tools
    by_default = review_items_from_cases(oracle_rows, memorising_rows)  # see module doc
    assert {i.judge for i in by_default} == {None}


def test_rows_carry_the_viewer_turns_and_the_transcript(oracle_rows):
    row = oracle_rows[0]
    assert row["viewer"] and all(isinstance(v, str) for v in row["viewer"])
    assert row["transcript"][0] == {"role": "user", "content": row["viewer"][0]}
    assert not any("reasoning_content" in m for r in oracle_rows for m in r["transcript"])


def test_a_limit_is_a_seeded_sample_in_order(oracle_rows, memorising_rows):
    def pick(seed):
        return [i.scenario_id for i in review_items_from_cases(
            oracle_rows, memorising_rows, limit=4, rng=random.Random(seed))]

    everything = [r["case_id"] for r in oracle_rows]
    assert pick(3) == pick(3) and len(pick(3)) == 4
    assert pick(3) == [c for c in everything if c in pick(3)]  # A's order kept
    assert len({tuple(pick(s)) for s in range(6)}) > 1
    assert len(review_items_from_cases(oracle_rows, memorising_rows, limit=99)) == 12


def test_other_suites_are_skipped_and_suites_chosen(oracle_rows):
    cot = rows(OraclePolicy(), 4, suites=("t1", "cot_length"))
    items = review_items_from_cases(cot, oracle_rows, suites=("t1",))
    assert [i.scenario_id for i in items] == [r["case_id"] for r in cot if r["suite"] == "t1"]


def test_no_shared_case_is_an_error(oracle_rows):
    t1_only = [r for r in oracle_rows if r["suite"] == "t1"]
    t2_only = [r for r in oracle_rows if r["suite"] == "t2"]
    with pytest.raises(ConfigError, match="A and B share no scenario") as err:
        review_items_from_cases(t1_only, t2_only)
    assert [p.path for p in err.value.problems] == ["A", "B"]
    assert "6 cases, e.g. t1/original/s00000" in err.value.report()


def test_different_evaluation_worlds_are_refused(oracle_rows):
    other_seed = rows(OraclePolicy(), 6, seed=1)
    with pytest.raises(ConfigError, match="played different scenarios") as err:
        review_items_from_cases(oracle_rows, other_seed)
    assert err.value.problems[0].path == "t1/original/s00000-product_fact"


def test_rows_without_transcripts_are_listed_with_their_line(oracle_rows):
    old = [{k: v for k, v in r.items() if k != "transcript"} for r in oracle_rows[:2]]
    old.append({"no": "suite"})
    with pytest.raises(ConfigError, match="run x/report.cases.jsonl: 3 unusable") as err:
        review_items_from_cases(old, oracle_rows, source_a="run x/report.cases.jsonl")
    report = err.value.report()
    assert "run x/report.cases.jsonl:1: transcript: missing" in report
    assert "evaluate the checkpoint again" in report
    assert "run x/report.cases.jsonl:3: not a case row (no suite)" in report


def test_bad_options_and_runs_without_episodes():
    with pytest.raises(ConfigError) as err:
        review_items_from_cases([], [], suites=("t1", "ifeval"), limit=0)
    report = err.value.report()
    assert "'ifeval' is not one of t1, t2, tool_robustness, prompt_robustness" in report
    assert "limit: 0 is not a positive number" in report
    ifeval = [{"suite": "ifeval", "key": 1}]
    with pytest.raises(ConfigError, match="B: no t1/t2 cases") as err:
        review_items_from_cases(rows(OraclePolicy(), 2), ifeval)
    assert "its suites: ifeval" in err.value.report()


def test_rendering_a_multi_turn_transcript():
    transcript = [
        {"role": "user", "content": "有M码吗"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get_inventory", "arguments": '{"variant": "P1-M"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "x" * 300},
        {"role": "system", "content": "请勿承诺疗效"},
        {"role": "assistant", "content": "有的，M码还有12件"},
        {"role": "user", "content": "几天到杭州"},
        {"role": "assistant", "content": "一般2天"},
    ]
    text = render_response(transcript)
    assert text.splitlines() == [
        "[turn 1]", 'tool call: get_inventory({"variant": "P1-M"})',
        "tool result: " + "x" * 240 + "…", "hook: 请勿承诺疗效", "reply: 有的，M码还有12件",
        "[turn 2]", "reply: 一般2天"]
    assert render_prompt(["有M码吗", "几天到杭州"]) == "viewer (turn 1): 有M码吗\n" \
                                                    "viewer (turn 2): 几天到杭州"
    assert render_prompt(["有M码吗"]) == "viewer: 有M码吗"
    assert render_response([{"role": "user", "content": "在吗"}]) == "(no reply)"
    assert judge_verdict(True, False) == "a" and judge_verdict(False, True) == "b"
    assert judge_verdict(False, False) == "tie" and judge_verdict(True, None) is None


def test_only_rule_judge_verdicts_become_pairwise_verdicts(oracle_rows, memorising_rows):
    assert {r["judge"] for r in oracle_rows} == {"rule"}
    llm = [{**r, "judge": "llm:judge-7b"} for r in memorising_rows]
    items = review_items_from_cases(oracle_rows, llm, with_judge=True)
    assert {i.judge for i in items} == {None}
