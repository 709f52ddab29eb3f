"""Saved A/B analyses on both backends: the report round-trips, refusals, audit, immutability."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from db.ab_repo import get_ab_analysis, list_ab_analyses, save_ab_analysis
from db.audit_repo import list_audit
from db.engine import in_transaction
from db.errors import StoreError
from hat_core.errors import NotFoundError

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ab" / "sample.csv"


@pytest.fixture(scope="module")
def report():
    from hat_core.evidence.ab import AbConfig, analyze
    from hat_core.evidence.loader import load_ab

    return analyze(load_ab(SAMPLE, metrics=("gmv",)),
                   AbConfig(expected_split=0.8, bootstrap=200, seed=1)).to_dict()


def save(sessions, result, name="week 49 test", sha=None):
    sha = sha or hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    return in_transaction(sessions, lambda s: save_ab_analysis(
        s, name=name, source_name="sample.csv", source_sha256=sha, result=result,
        n_rows=3000, n_users=600, actor="olga"))


def test_save_get_list_and_audit(sessions, report):
    saved = save(sessions, report)
    other = save(sessions, report, name="again", sha="0" * 64)
    with sessions() as s:
        got = get_ab_analysis(s, analysis_id=saved.id)
        assert [a.id for a in list_ab_analyses(s)] == [other.id, saved.id]
        assert [a.id for a in list_ab_analyses(s, source_sha256="0" * 64)] == [other.id]
        (entry,) = list_audit(s, entity="ab_analysis", entity_id=saved.id)
    assert got.result == report and got.metrics == ["gmv"] and got.trustworthy
    assert (got.control, got.treatment, got.settings["expected_split"]) == (
        "control", "treatment", 0.8)
    assert got.result["metrics"][0]["welch"]["ci_low"] == report["metrics"][0]["welch"]["ci_low"]
    assert entry.action == "ab_analysis.create" and entry.actor == "olga"
    assert entry.after["source_sha256"] == saved.source_sha256


@pytest.mark.parametrize(("name", "sha", "result", "message"), [
    ("", "a" * 64, None, "name is empty"),
    ("x", "abc", None, "64 lowercase hex"),
    ("x", "a" * 64, {"control": "c"}, "lacks treatment, metrics"),
])
def test_save_refuses_bad_input(sessions, report, name, sha, result, message):
    with pytest.raises(StoreError, match=message):
        save(sessions, report if result is None else result, name=name, sha=sha)
    with sessions() as s:
        assert list_ab_analyses(s) == []


def test_unknown_id(sessions):
    with pytest.raises(NotFoundError), sessions() as s:
        get_ab_analysis(s, analysis_id=99)


@pytest.mark.parametrize("statement", ["UPDATE ab_analyses SET name = 'x'",
                                       "DELETE FROM ab_analyses"])
def test_the_database_keeps_analyses_append_only(sessions, report, statement):
    save(sessions, report)
    with pytest.raises(DBAPIError, match="append-only"), sessions.begin() as s:
        s.execute(text(statement))
