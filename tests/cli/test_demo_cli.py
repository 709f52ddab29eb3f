"""`hat demo --no-ui` runs the story on a fresh embedded store and can be re-run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from db.engine import make_engine, make_session_factory
from db.harness_repo import list_versions

HAT = str(Path(sys.executable).parent / "hat")


def run_demo(home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "HAT_DATABASE_URL"}
    env.update(HAT_HOME=str(home), COLUMNS="200")
    return subprocess.run([HAT, "demo", "--no-ui", "--episodes", "30"], capture_output=True,
                          text=True, env=env, timeout=300, cwd=home.parent)


def test_demo_tells_the_story_and_is_idempotent(tmp_path):
    home = tmp_path / ".hat"
    first = run_demo(home)
    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "v1 -> v2: " in out and "0 semantic changes (surface only" in out
    assert "v2 -> v3: " in out and "tool bundle.offers added" in out
    assert "pass rate: v1 100%, v2 100%, v3 100%, v4 100%" in out
    memorised = next(line for line in out.splitlines() if line.startswith("pass rate: v1 100%")
                     and "v2 100%" not in line)
    assert "v4" in memorised
    second = run_demo(home)
    assert second.returncode == 0, second.stderr
    factory = make_session_factory(make_engine(f"sqlite:///{home / 'hat.db'}"))
    with factory() as session:
        versions = list_versions(session)
    assert sorted(v.number for v in versions) == [1, 2, 3, 4]
    assert "of 30 episodes failed; queued for review" in out
    assert "bad cases of v2 already queued" in second.stdout
