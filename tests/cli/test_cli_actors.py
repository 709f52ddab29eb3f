"""The names `hat harness submit --author`, `hat pairwise create --actor`, `hat ab analyze
--save --actor` and `hat ab experiment create --actor` record are proven, on SQLite and
PostgreSQL: a name alone (a wrong password, no terminal to ask on, no users at all) is refused
and stores nothing; a viewer is refused the operator's change; the saved `hat login` or the
right password is recorded as the actor."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from db.ab_repo import list_ab_analyses
from db.engine import in_transaction, make_engine, make_session_factory
from db.experiments_repo import list_experiments
from db.harness_repo import list_versions
from db.pairwise_repo import list_pairwise_reviews
from db.users_repo import add_user
from hat_cli.main import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
V1 = EXAMPLES / "harnesses" / "v1.yaml"
ITEMS = EXAMPLES / "pairwise" / "sample_items.jsonl"
SAMPLE = EXAMPLES / "ab" / "sample.csv"
OPS_PW, VIEW_PW = "ops long password", "viewer long password"

COMMANDS = {
    "submit": ["harness", "submit", str(V1), "--note", "n", "--author"],
    "pairwise": ["pairwise", "create", "--title", "t", "--items", str(ITEMS), "--system-a", "a",
                 "--system-b", "b", "--actor"],
    "ab": ["ab", "analyze", str(SAMPLE), "--bootstrap", "0", "--save", "--actor"],
    "experiment": ["ab", "experiment", "create", "wk49", "--split", "0.2", "--actor"],
}


@pytest.fixture
def store(db_url, tmp_path, monkeypatch):
    monkeypatch.setenv("HAT_DATABASE_URL", db_url)
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "home"))
    engine = make_engine(db_url)
    yield make_session_factory(engine)
    engine.dispose()


def with_users(store) -> None:
    in_transaction(store, lambda s: (
        add_user(s, name="ops", role="operator", password=OPS_PW, actor="test"),
        add_user(s, name="vic", role="viewer", password=VIEW_PW, actor="test")))


def hat(*args: str, stdin: str | None = None):
    return CliRunner().invoke(app, list(args), input=stdin)


def recorded(store) -> dict[str, list[str]]:
    """Who each kind of record was stored by."""
    with store() as s:
        return {"submit": [v.author for v in list_versions(s)],
                "pairwise": [r.created_by for r in list_pairwise_reviews(s)],
                "ab": [a.created_by for a in list_ab_analyses(s)],
                "experiment": [e.created_by for e in list_experiments(s)]}


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_a_name_alone_is_refused(store, kind):
    nobody = hat(*COMMANDS[kind], "ops", "--password-stdin", stdin=OPS_PW + "\n")
    assert nobody.exit_code == 2 and "the store has no users" in nobody.output
    with_users(store)
    wrong = hat(*COMMANDS[kind], "ops", "--password-stdin", stdin="a wrong guess here\n")
    assert wrong.exit_code == 2 and "not acting as ops" in wrong.output
    no_tty = hat(*COMMANDS[kind], "ops")
    assert no_tty.exit_code == 2 and "no terminal to ask on" in no_tty.output
    viewer = hat(*COMMANDS[kind], "vic", "--password-stdin", stdin=VIEW_PW + "\n")
    assert viewer.exit_code == 2 and "vic is viewer" in viewer.output
    assert "needs the operator role or above" in viewer.output
    assert recorded(store) == {"submit": [], "pairwise": [], "ab": [], "experiment": []}

    proven = hat(*COMMANDS[kind], "ops", "--password-stdin", stdin=OPS_PW + "\n")
    assert proven.exit_code == 0, proven.output
    assert recorded(store)[kind] == ["ops"]


def test_the_saved_login_is_the_default_actor(store):
    with_users(store)
    assert hat("login", "ops", "--password-stdin", stdin=OPS_PW + "\n").exit_code == 0
    for kind, args in COMMANDS.items():
        done = hat(*args[:-1])  # no --actor: the saved login
        assert done.exit_code == 0, (kind, done.output)
    assert recorded(store) == {"submit": ["ops"], "pairwise": ["ops"], "ab": ["ops"],
                               "experiment": ["ops"]}
    assert hat("logout").exit_code == 0
    after = hat(*COMMANDS["submit"][:-1])  # no login, no terminal: refused
    assert after.exit_code == 2 and "no terminal to ask on" in after.output
