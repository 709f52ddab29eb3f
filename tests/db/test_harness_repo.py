"""Harness versions: numbering, dedup by content, outbox and audit in the same transaction,
all-or-nothing transactions, and immutability enforced by the database itself."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from store_helpers import variant

from db import harness_repo
from db.audit_repo import list_audit
from db.engine import in_transaction
from db.errors import StoreError
from db.harness_repo import (
    count_versions,
    find_version_by_hash,
    get_version,
    get_version_by_id,
    latest_version,
    list_lines,
    list_versions,
    submit_harness,
)
from db.models import HarnessVersionRow, OutboxEvent
from db.outbox_repo import list_outbox_events
from hat_core.errors import NotFoundError


def submit(sessions, harness, author="ann", note=""):
    return in_transaction(
        sessions, lambda s: submit_harness(s, harness=harness, author=author, note=note)
    )


def test_versions_are_numbered_per_line_with_parents(sessions):
    first, second = submit(sessions, variant(1)), submit(sessions, variant(2), note="why")
    other = submit(sessions, variant(1, line="other-line"))
    assert (first.number, second.number, other.number) == (1, 2, 1)
    assert (first.parent_id, second.parent_id, second.parent_number) == (None, first.id, 1)
    assert second.note == "why" and second.author == "ann" and second.line == variant(1).harness
    assert second.created_at.tzinfo is not None


def test_identical_content_returns_the_stored_version(sessions):
    first = submit(sessions, variant(1))
    again = submit(sessions, variant(1), author="bob", note="again")
    assert again == first
    with sessions() as s:
        assert count_versions(s) == 1
        assert len(list_outbox_events(s)) == 1
        assert len(list_audit(s, entity="harness_version")) == 1


def test_stored_document_round_trips_to_the_same_harness(sessions):
    stored = submit(sessions, variant(5))
    assert stored.harness() == variant(5)
    assert stored.content_hash == variant(5).content_hash()
    assert stored.document == variant(5).canonical_json()


def test_submit_writes_outbox_event_and_audit_entry(sessions):
    version = submit(sessions, variant(1), author="carol")
    with sessions() as s:
        (event,) = list_outbox_events(s)
        (entry,) = list_audit(s, entity="harness_version")
    assert event.kind == "harness.version.created" and event.harness_version_id == version.id
    assert event.payload["number"] == 1 and event.done_at is None
    assert (entry.actor, entry.action) == ("carol", "harness.submit")
    assert entry.entity_id == str(version.id)
    assert entry.before is None and entry.after["content_hash"] == version.content_hash


def test_lookups(sessions):
    a, b = submit(sessions, variant(1)), submit(sessions, variant(2))
    line = variant(1).harness
    with sessions() as s:
        assert get_version(s, number=2) == b
        assert get_version(s, number=1, line=line) == a
        assert get_version_by_id(s, version_id=a.id) == a
        assert find_version_by_hash(s, line=line, content_hash=b.content_hash) == b
        assert find_version_by_hash(s, line=line, content_hash="0" * 64) is None
        assert latest_version(s, line=line) == b
        assert [v.number for v in list_versions(s)] == [2, 1]
        assert [v.number for v in list_versions(s, before_id=b.id)] == [1]
        with pytest.raises(NotFoundError, match="no version 9"):
            get_version(s, number=9)


def test_a_bare_number_needs_a_single_line(sessions):
    with sessions() as s, pytest.raises(NotFoundError, match="hat harness submit"):
        get_version(s, number=1)
    submit(sessions, variant(1))
    submit(sessions, variant(1, line="zeta"))
    with sessions() as s:
        assert list_lines(s) == sorted([variant(1).harness, "zeta"])
        with pytest.raises(StoreError, match="LINE:N"):
            get_version(s, number=1)
        assert get_version(s, number=1, line="zeta").line == "zeta"


def test_a_failed_transaction_leaves_nothing(sessions):
    def submit_then_fail(s):
        submit_harness(s, harness=variant(1), author="ann", note="")
        raise RuntimeError("boom after the insert")

    with pytest.raises(RuntimeError):
        in_transaction(sessions, submit_then_fail)
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(HarnessVersionRow)) == 0
        assert s.scalar(select(func.count()).select_from(OutboxEvent)) == 0
        assert list_audit(s) == []
    assert submit(sessions, variant(1)).number == 1


def test_a_failure_inside_submit_rolls_back_the_version(sessions, monkeypatch):
    def broken_outbox(session, version):
        raise RuntimeError("outbox unavailable")

    monkeypatch.setattr(harness_repo, "_emit_created", broken_outbox)
    with pytest.raises(RuntimeError):
        submit(sessions, variant(1))
    monkeypatch.undo()
    with sessions() as s:
        assert count_versions(s) == 0
    assert submit(sessions, variant(2)).number == 1


@pytest.mark.parametrize("table", ["harness_versions", "audit_log"])
@pytest.mark.parametrize("statement", ["UPDATE {t} SET created_at = created_at", "DELETE FROM {t}"])
def test_the_database_refuses_changes_to_append_only_tables(sessions, table, statement):
    submit(sessions, variant(1))
    with pytest.raises(DBAPIError, match="append-only"), sessions.begin() as s:
        s.execute(text(statement.format(t=table)))
    with sessions() as s:
        assert count_versions(s) == 1 and len(list_audit(s)) == 1


def test_the_repository_offers_no_update_or_delete_of_versions():
    public = [n for n in dir(harness_repo) if not n.startswith("_")]
    assert not [n for n in public if n.startswith(("update", "delete", "remove", "edit"))]


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
@pytest.mark.parametrize("table", ["harness_versions", "audit_log"])
def test_postgres_refuses_truncate(sessions, table):
    submit(sessions, variant(1))
    with pytest.raises(DBAPIError, match="append-only"), sessions.begin() as s:
        s.execute(text(f"TRUNCATE {table} CASCADE"))
