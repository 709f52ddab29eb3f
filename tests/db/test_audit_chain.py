"""The audit log's hash chain and the release tables' triggers, on SQLite and PostgreSQL: the
chain verifies after ordinary writes, and finds a row deleted or changed directly in SQL
(with the append-only triggers bypassed, as a table owner or superuser can); promotions and
a model version's gate results refuse UPDATE and DELETE."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from db.audit_chain import verify_chain
from db.audit_repo import record_audit
from db.engine import in_transaction
from db.release_repo import promote, register_model_version

HAT = str(Path(sys.executable).parent / "hat")


def fill(sessions, n: int = 5) -> None:
    for i in range(n):
        in_transaction(sessions, lambda s, i=i: record_audit(
            s, actor="ann", action="test.write", entity="thing", entity_id=i,
            before={"n": i} if i % 2 else None, after={"n": i + 1, "note": "ümlaut ✓"}))


def behind_the_triggers(sessions, sql: str) -> None:
    """Run `sql` as the table owner would, with audit_log's triggers out of the way."""
    with sessions.begin() as s:
        if s.get_bind().dialect.name == "postgresql":
            s.execute(text("SET LOCAL session_replication_role = replica"))  # superuser
            s.execute(text(sql))
        else:
            s.execute(text("DROP TRIGGER audit_log_no_delete"))
            s.execute(text("DROP TRIGGER audit_log_no_update"))
            s.execute(text(sql))


def report(sessions):
    with sessions() as s:
        return verify_chain(s)


def test_the_chain_verifies_and_links_each_entry(sessions):
    fill(sessions)
    result = report(sessions)
    assert result.ok and result.entries == 5 and len(result.head) == 64


def test_a_deleted_entry_is_found(sessions):
    fill(sessions)
    behind_the_triggers(sessions, "DELETE FROM audit_log WHERE id = 3")
    result = report(sessions)
    assert not result.ok and result.entries == 4
    assert result.problems == ("entry 4: its link does not match the entry before it (id 2): "
                               "an entry was removed or reordered",)


def test_a_changed_entry_is_found(sessions):
    fill(sessions)
    behind_the_triggers(sessions, "UPDATE audit_log SET actor = 'mallory' WHERE id = 2")
    (problem,) = report(sessions).problems
    assert problem.startswith("entry 2: its content does not match its hash")


def test_hat_audit_verify(sessions, db_url, tmp_path):
    env = {**os.environ, "HAT_DATABASE_URL": db_url, "HAT_HOME": str(tmp_path / "home")}

    def verify() -> subprocess.CompletedProcess:
        return subprocess.run([HAT, "audit", "verify"], capture_output=True, text=True,
                              env=env, timeout=120)

    fill(sessions, 3)
    good = verify()
    assert good.returncode == 0 and "3 entries, chain intact, head " in good.stdout
    behind_the_triggers(sessions, "DELETE FROM audit_log WHERE id = 1")
    bad = verify()
    assert bad.returncode == 2 and "hash chain is broken" in bad.stderr
    assert "entry 2: its link does not match" in bad.stderr


def test_promotions_and_gate_results_are_fixed(sessions):
    def setup(s):
        mv = register_model_version(s, registry_name="m", version="1",
                                    gate_results={"passed": False})
        promote(s, slot="ab", model_version_id=mv.id, actor="ann", reason="r",
                gate_snapshot={})
        unused = register_model_version(s, registry_name="m", version="2")  # no references
        return mv.id, unused.id

    mv_id, unused_id = in_transaction(sessions, setup)
    for sql in ("UPDATE promotions SET override = true",
                "DELETE FROM promotions",
                f"UPDATE model_versions SET gate_results = '{{\"passed\": true}}' "
                f"WHERE id = {mv_id}",
                f"DELETE FROM model_versions WHERE id = {unused_id}"):
        with pytest.raises(DBAPIError), sessions.begin() as s:
            s.execute(text(sql))
    with sessions.begin() as s:  # other columns of a model version may still change
        s.execute(text(f"UPDATE model_versions SET mlflow_run_id = 'r1' WHERE id = {mv_id}"))


def test_the_migration_chains_existing_entries(empty_db_url):
    from db import migrate
    from db.engine import make_engine, make_session_factory

    migrate.upgrade(empty_db_url, "0004")
    engine = make_engine(empty_db_url)
    with engine.begin() as conn:  # entries written before the chain existed
        for i in range(3):
            conn.execute(text(
                "INSERT INTO audit_log (actor, action, entity, entity_id, before, after, "
                "created_at) VALUES ('ann', 'old.write', 'thing', :i, NULL, :after, :at)"),
                {"i": str(i), "after": f'{{"n": {i}}}', "at": f"2026-12-0{i + 1} 10:00:00"})
    engine.dispose()
    migrate.upgrade(empty_db_url)
    engine = make_engine(empty_db_url)
    sessions = make_session_factory(engine)
    fill(sessions, 2)  # new entries continue the chain
    result = report(sessions)
    engine.dispose()
    assert result.ok and result.entries == 5, result.problems
    migrate.downgrade(empty_db_url, "0004")  # and back: the columns go, the guard stays
    migrate.upgrade(empty_db_url)
    engine = make_engine(empty_db_url)
    assert report(make_session_factory(engine)).ok
    with pytest.raises(DBAPIError), engine.begin() as conn:
        conn.execute(text("DELETE FROM audit_log"))
    engine.dispose()


def test_an_anchor_finds_the_newest_entries_removed(sessions, db_url, tmp_path):
    env = {**os.environ, "HAT_DATABASE_URL": db_url, "HAT_HOME": str(tmp_path / "home")}
    anchor = tmp_path / "anchor.json"

    def hat(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([HAT, "audit", *args], capture_output=True, text=True, env=env,
                              timeout=120)

    fill(sessions, 4)
    made = hat("anchor", "--out", str(anchor))
    assert made.returncode == 0, made.stderr
    assert "anchored 4 entries at entry 4" in made.stdout
    fill(sessions, 2)  # newer entries are fine
    good = hat("verify", "--anchor", str(anchor))
    assert good.returncode == 0 and "6 entries, chain intact" in good.stdout, good.stderr
    behind_the_triggers(sessions, "DELETE FROM audit_log WHERE id >= 4")  # the newest three
    assert hat("verify").returncode == 0  # a shorter chain is still a valid chain
    bad = hat("verify", "--anchor", str(anchor))
    assert bad.returncode == 2, bad.stdout
    assert "its head, entry 4 of 4, is not in the log (newest now: 3, 3 entries)" in bad.stderr
    anchor.write_text('{"entries": "4", "head": "x"}')
    broken = hat("verify", "--anchor", str(anchor))
    assert broken.returncode == 2 and "entries: a whole number" in broken.stderr
    assert "head_id: a whole number" in broken.stderr and "Traceback" not in broken.stderr
