"""Logging in behind the throttle, on SQLite and PostgreSQL: a lockout per user name after
repeated failures (audited, the right password refused meanwhile, kept across engines, over
after its time), per client across names, unknown names counted alike, a success clearing
the name's count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from db.audit_repo import list_audit
from db.engine import in_transaction, make_engine, make_session_factory
from db.login_repo import POLICY, WRONG, ThrottlePolicy, attempt_login
from db.models import LoginThrottleRow
from db.sessions_repo import session_user
from db.users_repo import add_user

T0 = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
GOOD = "correct horse battery"


def add(sessions, name="ann"):
    in_transaction(sessions, lambda s: add_user(s, name=name, role="operator", password=GOOD,
                                                actor="test"))


def login(sessions, name="ann", password="wrong horse battery", client="10.0.0.7",
          at=T0, policy=POLICY):
    return in_transaction(sessions, lambda s: attempt_login(
        s, name=name, password=password, client_address=client, now=at, policy=policy))


def test_a_right_password_opens_a_session(sessions):
    add(sessions)
    result = login(sessions, password=GOOD)
    assert result.refusal == "" and result.user.name == "ann"
    with sessions() as s:
        assert session_user(s, token=result.token, now=T0).name == "ann"


def test_the_user_lockout_refuses_the_right_password_and_is_audited(sessions, db_url):
    add(sessions)
    for i in range(POLICY.user_failures - 1):
        assert login(sessions, at=T0 + timedelta(seconds=i)).refusal == WRONG
    locking = login(sessions, at=T0 + timedelta(seconds=10))
    assert "Too many failed logins" in locking.refusal
    # another engine (a restarted console) sees the lockout: it is in the store
    engine = make_engine(db_url)
    fresh = make_session_factory(engine)
    refused = login(fresh, password=GOOD, client="10.0.0.8", at=T0 + timedelta(minutes=5))
    assert refused.token is None and "Too many failed logins" in refused.refusal
    with fresh() as s:
        (entry,) = [e for e in list_audit(s, entity="login")]
    engine.dispose()
    assert (entry.action, entry.entity_id, entry.actor) == ("login.lockout", "user:ann",
                                                            "anonymous")
    assert entry.after["failures"] == POLICY.user_failures
    assert entry.after["client"] == "10.0.0.7"
    after = T0 + timedelta(seconds=10 + POLICY.lockout_s + 1)
    assert login(sessions, password=GOOD, at=after).user.name == "ann"


def test_a_success_clears_the_names_count(sessions):
    add(sessions)
    for i in range(POLICY.user_failures - 1):
        login(sessions, at=T0 + timedelta(seconds=i))
    assert login(sessions, password=GOOD, at=T0 + timedelta(seconds=5)).token
    assert login(sessions, at=T0 + timedelta(seconds=6)).refusal == WRONG  # counting anew


def test_failures_outside_the_window_do_not_add_up(sessions):
    add(sessions)
    policy = ThrottlePolicy(user_failures=3, client_failures=100, window_s=60, lockout_s=60)
    for minute in range(6):  # one failure a minute: never three in one window
        at = T0 + timedelta(minutes=minute, seconds=1)
        assert login(sessions, at=at, policy=policy).refusal == WRONG


def test_the_client_lockout_spans_names_and_unknown_names_count(sessions):
    add(sessions)
    policy = ThrottlePolicy(user_failures=100, client_failures=4, window_s=600, lockout_s=600)
    for i in range(3):
        assert login(sessions, name=f"nobody{i}", at=T0, policy=policy).refusal == WRONG
    assert "Too many" in login(sessions, name="ghost", at=T0, policy=policy).refusal
    assert login(sessions, password=GOOD, at=T0, policy=policy).token is None
    other = login(sessions, password=GOOD, client="10.9.9.9", at=T0, policy=policy)
    assert other.user.name == "ann"  # another client is not locked
    with sessions() as s:
        keys = set(s.scalars(select(LoginThrottleRow.key)))
        entries = list_audit(s, entity="login")
    assert "user:nobody0" in keys and "client:10.0.0.7" in keys
    assert [e.entity_id for e in entries] == ["client:10.0.0.7"]
