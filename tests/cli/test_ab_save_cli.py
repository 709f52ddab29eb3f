"""`hat ab analyze FILE --save`: the analysis lands in the store (both backends); an
unmigrated store exits 2 before any work; without `--save` nothing is stored."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from typer.testing import CliRunner

from hat_cli.ab_cmd import app

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ab" / "sample.csv"
runner = CliRunner()
OLGA_PW = "olga long password"


def stored(url):
    from db.ab_repo import list_ab_analyses
    from db.engine import make_engine, make_session_factory

    engine = make_engine(url)
    try:
        with make_session_factory(engine)() as s:
            return list_ab_analyses(s)
    finally:
        engine.dispose()


def test_save_stores_the_printed_result(db_url, monkeypatch, tmp_path):
    from db.engine import in_transaction, make_engine, make_session_factory
    from db.users_repo import add_user

    monkeypatch.setenv("HAT_DATABASE_URL", db_url)
    monkeypatch.setenv("HAT_HOME", str(tmp_path))
    engine = make_engine(db_url)
    in_transaction(make_session_factory(engine), lambda s: add_user(
        s, name="olga", role="operator", password=OLGA_PW, actor="test"))
    engine.dispose()
    args = ["analyze", str(SAMPLE), "--expected-split", "0.8", "--bootstrap", "0",
            "--metrics", "gmv,detail_page_views", "--json"]
    assert runner.invoke(app, args).exit_code == 0
    assert stored(db_url) == []
    result = runner.invoke(app, [*args, "--save", "--name", "wk49", "--actor", "olga",
                                 "--password-stdin"], input=OLGA_PW + "\n")
    assert result.exit_code == 0, result.output
    (saved,) = stored(db_url)
    printed = json.loads(result.stdout)
    assert saved.result == printed and saved.name == "wk49" and saved.created_by == "olga"
    assert saved.source_sha256 == hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    assert (saved.source_name, saved.n_rows, saved.n_users) == ("sample.csv", 3000, 600)
    assert saved.metrics == ["gmv", "detail_page_views"]
    assert "saved as A/B analysis" in result.stderr


def test_save_refuses_an_unmigrated_store(monkeypatch, tmp_path):
    monkeypatch.setenv("HAT_DATABASE_URL", f"sqlite:///{tmp_path / 'empty.db'}")
    result = runner.invoke(app, ["analyze", str(SAMPLE), "--save"])
    assert result.exit_code == 2 and "hat db upgrade" in result.stderr
    assert "gmv" not in result.stdout  # refused before analysing
