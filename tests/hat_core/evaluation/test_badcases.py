"""Bad cases: every failed case with its failure type, to a JSONL file and to the SQL store
(a real migrated database: SQLite, then PostgreSQL)."""

from __future__ import annotations

import json

import pytest

from hat_core.evaluation.badcases import (
    JsonlBadCaseSink,
    ListBadCaseSink,
    TeeBadCaseSink,
    bad_case_of,
    read_bad_cases,
)
from hat_core.evaluation.suites.qa import T1Suite, T2Suite
from hat_core.sim.judge import FAILURE_TYPES
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy


def memorising_t2(v1_harness, sink):
    return T2Suite().run(MemorisingPolicy(v1_harness), v1_harness, episodes=8, variants=2,
                         bad_cases=sink, t1_pass_rate=1.0)


def test_failed_cases_go_to_a_jsonl_file(tmp_path, v1_harness):
    path = tmp_path / "bad" / "cases.jsonl"
    memory = ListBadCaseSink()
    sink = TeeBadCaseSink([JsonlBadCaseSink(path), memory])
    result = memorising_t2(v1_harness, sink)
    sink.close()
    rows = read_bad_cases(path)
    failed = [r for r in result.rows if not r["passed"]]
    assert len(rows) == len(failed) == len(memory.records) > 0
    assert [r["case_id"] for r in rows] == [r["case_id"] for r in failed]
    row = rows[0]
    assert row["suite"] == "t2" and row["failure_type"] in FAILURE_TYPES
    assert row["failure_type"] == row["failures"][0]
    assert row["episode"]["messages"][0]["role"] == "system"
    assert row["episode"]["scenario"]["id"] == row["scenario_id"]
    assert row["judge_scores"]["judge"] == "rule" and "accuracy" in row["judge_scores"]
    assert row["metadata"]["variant"]["pool"] == "heldout"
    assert row["variant_id"].startswith("h")


def test_passing_cases_are_not_bad_cases(tmp_path, v1_harness):
    path = tmp_path / "none.jsonl"
    sink = JsonlBadCaseSink(path)
    T1Suite().run(OraclePolicy(), v1_harness, episodes=5, bad_cases=sink)
    sink.close()
    assert path.exists() and read_bad_cases(path) == []
    outcomes = T1Suite().play(OraclePolicy(), v1_harness, episodes=2)
    assert bad_case_of(outcomes[0]) is None


def test_bad_cases_are_queued_in_the_store(db_url, v1_harness, tmp_path):
    from db.badcases_repo import BadCaseFilter, count_bad_cases, list_bad_cases
    from db.engine import in_transaction, make_engine, make_session_factory
    from db.harness_repo import submit_harness
    from hat_cli.badcase_sink import StoreBadCaseSink, stored_version_id

    engine = make_engine(db_url)
    sessions = make_session_factory(engine)
    try:
        version = in_transaction(sessions, lambda s: submit_harness(
            s, harness=v1_harness, author="ann", note="wk 49"))
        file_arg = str(tmp_path / "v1.yaml")
        (tmp_path / "v1.yaml").write_text("not read", encoding="utf-8")
        assert stored_version_id(sessions, file_arg, v1_harness) == version.id
        sink = StoreBadCaseSink(sessions, harness_version_id=version.id, actor="eval-test")
        memory = ListBadCaseSink()
        memorising_t2(v1_harness, TeeBadCaseSink([sink, memory]))
        with sessions() as s:
            stored = list_bad_cases(s, where=BadCaseFilter(harness_version_id=version.id),
                                    limit=500)
            assert count_bad_cases(s) == len(memory.records) == len(sink.ids) > 0
        by_case = {c.episode["case_id"]: c for c in stored}
        for record in memory.records:
            case = by_case[record.case_id]
            assert case.failure_type == record.failure_type
            assert case.review_state == "new" and case.episode["suite"] == "t2"
            assert case.episode["messages"] == json.loads(json.dumps(
                record.episode["messages"]))
            assert case.judge_scores["failures"] == list(record.failures)
    finally:
        engine.dispose()


def test_an_unstored_harness_file_is_refused(db_url, v2_harness, tmp_path):
    from db.engine import make_engine, make_session_factory
    from hat_cli.badcase_sink import stored_version_id
    from hat_core.errors import ConfigError

    engine = make_engine(db_url)
    try:
        with pytest.raises(ConfigError, match="hat harness submit"):
            stored_version_id(make_session_factory(engine), str(tmp_path / "x.yaml"),
                              v2_harness)
    finally:
        engine.dispose()
