"""User names and the password policy (`db.credentials`), without a database."""

from __future__ import annotations

import pytest

from db.credentials import MIN_PASSWORD, check_name, check_password, password_problems
from db.errors import StoreError


@pytest.mark.parametrize("name", ["ann", "Ann.Lee", "ops_bot-2", "a" * 64])
def test_identifier_names_pass(name):
    check_name(name)


@pytest.mark.parametrize("name", ["", " ann", "ann ", "[u](javascript:alert(32))", "**admin**",
                                  "2fast", "_ann", "ann@example.com", "a" * 65, "ann\n",
                                  "<b>x</b>", "ännä"])
def test_other_names_are_refused_with_the_rule(name):
    with pytest.raises(StoreError, match="must start with a letter"):
        check_name(name)


@pytest.mark.parametrize(("password", "problem"), [
    ("12345678", f"at least {MIN_PASSWORD}"),
    ("password", "common password"),
    ("PassWord1234", "common password"),
    ("        ", "blank"),
    (" " * 20, "blank"),
    ("", "blank"),
    ("x" * 20, "one character repeated"),
    ("annika-the-ops", "the user name"),
])
def test_weak_passwords_are_refused(password, problem):
    problems = password_problems(password, name="annika-the-ops")
    assert any(problem in p for p in problems), problems
    with pytest.raises(StoreError, match="password refused"):
        check_password(password, name="annika-the-ops")


def test_every_problem_is_listed_at_once():
    assert len(password_problems("password", name="ann")) == 2  # short and common


@pytest.mark.parametrize("password", ["correct horse battery", "demo-password-1", "hat-demo-2026"])
def test_good_passwords_pass(password):
    assert password_problems(password, name="ann") == []
