"""`hat db`, `hat harness submit|list|show|diff N M` and `hat user` through the installed
console script, on SQLite and PostgreSQL (`HAT_DATABASE_URL`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

HAT = str(Path(sys.executable).parent / "hat")


@pytest.fixture
def hat(tmp_path, db_url):
    """Run `hat` against the test database; returns the CompletedProcess."""
    return _runner(tmp_path, db_url)


def _runner(tmp_path: Path, url: str | None):
    env = {**os.environ, "HAT_HOME": str(tmp_path / "home")}
    env.pop("HAT_DATABASE_URL", None)
    if url is not None:
        env["HAT_DATABASE_URL"] = url

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([HAT, *args], input=stdin, capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=120)

    return run


def write_variant(tmp_path: Path, v1_path: Path, description: str) -> str:
    data = yaml.safe_load(v1_path.read_text(encoding="utf-8"))
    data["description"] = description
    path = tmp_path / f"{abs(hash(description))}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return str(path)


ANN_PW = "ann long password"


def with_users(hat, *names: str) -> None:
    """An admin `ann`, then an operator per name (password `<name> long password`)."""
    assert hat("user", "add", "ann", "--role", "admin", "--password-stdin",
               stdin=f"{ANN_PW}\n").returncode == 0
    for name in names:
        added = hat("user", "add", name, "--role", "operator", "--actor", "ann",
                    "--password-stdin", stdin=f"{ANN_PW}\n{name} long password\n")
        assert added.returncode == 0, added.stderr


def submit(hat, *args: str, author: str = "ann"):
    return hat("harness", "submit", *args, "--author", author, "--password-stdin",
               stdin=f"{author} long password\n")


def test_submit_list_show_diff(hat, tmp_path, v1_path):
    with_users(hat, "bob", "carol")
    first = submit(hat, str(v1_path), "--note", "baseline")
    assert (first.returncode, first.stdout) == (0, "1\n"), first.stderr
    second = submit(hat, write_variant(tmp_path, v1_path, "week 49"), "--note", "reworded",
                    author="bob")
    assert second.stdout == "2\n"
    again = submit(hat, str(v1_path), author="carol")
    assert again.stdout == "1\n" and "identical" in again.stderr

    listed = hat("harness", "list").stdout.splitlines()
    assert listed[1].split("\t")[1:4:2] == ["2", "bob"] and listed[2].endswith("baseline")
    assert len(listed) == 3

    shown = hat("harness", "show", "2")
    assert shown.returncode == 0 and "version 2, parent 1" in shown.stdout
    assert "description: week 49" in shown.stdout
    rendered = hat("harness", "show", "live-stream-avatar:1", "--rendered")
    assert rendered.returncode == 0 and "# tools" in rendered.stdout
    assert "get_product_info" in rendered.stdout

    diff = hat("harness", "diff", "1", "2")
    assert diff.returncode == 0, diff.stderr
    assert "description" in diff.stdout
    missing = hat("harness", "show", "9")
    assert missing.returncode == 2 and "no version 9" in missing.stderr


def test_submit_invalid_exits_2_and_stores_nothing(hat, tmp_path, v1_path):
    data = yaml.safe_load(v1_path.read_text(encoding="utf-8"))
    data["skills"][0]["tools"] = ["no.such.tool"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with_users(hat)
    result = submit(hat, str(bad))
    assert result.returncode == 2 and "unknown tool" in result.stderr
    assert "Traceback" not in result.stderr
    assert hat("harness", "list").stdout.splitlines()[1:] == []


def test_users(hat):
    added = hat("user", "add", "rita", "--role", "admin", "--password-stdin",
                stdin="a long secret\n")  # the first user of a store: an admin, no login
    assert added.returncode == 0, added.stderr
    refused = hat("user", "add", "sam", "--role", "boss", "--password-stdin", stdin="x" * 10)
    assert refused.returncode == 2 and "valid: viewer, reviewer, operator, admin" in refused.stderr
    listed = hat("user", "list")
    assert listed.stdout.startswith("rita\tadmin\t") and "sam" not in listed.stdout


def test_db_upgrade_then_submit(tmp_path, empty_db_url, v1_path):
    hat = _runner(tmp_path, empty_db_url)
    refused = hat("harness", "submit", str(v1_path))
    assert refused.returncode == 2 and "run `hat db upgrade`" in refused.stderr
    assert hat("db", "upgrade").returncode == 0
    from db.migrate import head

    assert f"at {head()}, head {head()}" in hat("db", "current").stdout
    nobody = hat("harness", "submit", str(v1_path))
    assert nobody.returncode == 2 and "the store has no users" in nobody.stderr
    with_users(hat)
    assert submit(hat, str(v1_path)).stdout == "1\n"
    assert hat("db", "downgrade", "base").returncode == 0
    assert "base (empty)" in hat("db", "current").stdout


def test_embedded_default_lives_under_hat_home(tmp_path, v1_path):
    hat = _runner(tmp_path, None)
    assert hat("db", "upgrade").returncode == 0
    assert (tmp_path / "home" / "hat.db").is_file()
    with_users(hat)
    assert submit(hat, str(v1_path)).stdout == "1\n"
