"""`hat data build --harness N` on a real migrated store: the bad cases sent to training go
into the build and are marked consumed by it; unsent, `pass` and corrupt ones do not."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from db.badcases_repo import add_bad_case, get_bad_case, label_bad_case
from db.engine import in_transaction, make_engine, make_session_factory
from db.harness_repo import submit_harness
from hat_core.evaluation.badcases import ListBadCaseSink
from hat_core.evaluation.evaluate import EvalOptions, evaluate
from hat_core.harness.io import load_harness
from hat_core.sim.policy import RandomPolicy

HAT = str(Path(sys.executable).parent / "hat")
ROOT = Path(__file__).resolve().parents[2]
V1 = ROOT / "examples" / "harnesses" / "v1.yaml"
TINY = str(ROOT / "examples" / "configs" / "data_tiny.yaml")
SMALL = ["--set", "scenarios=20", "--set", "variants=1", "--set", "splits.heldout_variants=1",
         "--set", "opd.size=10", "--quiet"]
REVIEWS = {  # name -> (review_state, label, send_to_training)
    "sent": ("confirmed", "wrong_tool", True),
    "kept_back": ("confirmed", "wrong_tool", False),
    "judge_was_wrong": ("dismissed", "pass", True),
    "corrupt": ("confirmed", "wrong_tool", True),
}


@pytest.fixture
def store(db_url, monkeypatch, tmp_path):
    monkeypatch.setenv("HAT_DATABASE_URL", db_url)
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "home"))
    harness = load_harness(V1)
    sink = ListBadCaseSink()
    evaluate(RandomPolicy(random.Random(0)), harness, ["t1"], EvalOptions(episodes=15),
             bad_cases=sink)
    engine = make_engine(db_url)
    sessions = make_session_factory(engine)

    def fill(s):
        version = submit_harness(s, harness=harness, author="a")
        ids = {}
        for i, (name, (state, label, sent)) in enumerate(REVIEWS.items()):
            episode = {"scenario": "not a scenario"} if name == "corrupt" else \
                sink.records[i].episode
            case = add_bad_case(s, episode=episode, harness_version_id=version.id,
                                failure_type="wrong_tool")
            label_bad_case(s, bad_case_id=case.id, review_state=state, reviewer="rita",
                           label=label, send_to_training=sent)
            ids[name] = case.id
        return ids

    yield sessions, in_transaction(sessions, fill)
    engine.dispose()


def data_build(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([HAT, "data", "build", "--harness", "1", "--config", TINY,
                           "--out", str(out), *SMALL, *extra],
                          capture_output=True, text=True, timeout=300)


def test_the_next_build_takes_the_sent_case_once(store, tmp_path):
    sessions, ids = store
    first = data_build(tmp_path / "d1")
    assert first.returncode == 0, first.stdout + first.stderr
    manifest = json.loads((tmp_path / "d1" / "manifest.json").read_text())
    fed = manifest["bad_cases"]
    assert fed["ids"] == [ids["sent"]] and fed["rows"] == 2
    assert [s["id"] for s in fed["skipped"]] == [ids["corrupt"]]
    assert f"bad case {ids['corrupt']} skipped" in first.stdout
    assert f"2 sent, 1 in ({ids['sent']})" in first.stdout
    with sessions() as s:
        cases = {n: get_bad_case(s, bad_case_id=i) for n, i in ids.items()}
    assert cases["sent"].consumed_by_build == manifest["version"]
    assert cases["sent"].consumed_by_job_id is None
    assert all(cases[n].consumed_by_build is None for n in ("kept_back", "judge_was_wrong",
                                                            "corrupt"))
    second = data_build(tmp_path / "d2")
    assert second.returncode == 0, second.stdout + second.stderr
    again = json.loads((tmp_path / "d2" / "manifest.json").read_text())["bad_cases"]
    assert again["ids"] == [] and [s["id"] for s in again["skipped"]] == [ids["corrupt"]]


def test_no_bad_cases_leaves_the_store_alone(store, tmp_path):
    sessions, ids = store
    result = data_build(tmp_path / "d", "--no-bad-cases")
    assert result.returncode == 0, result.stdout + result.stderr
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert manifest["bad_cases"]["ids"] == [] and "bad cases " not in result.stdout
    with sessions() as s:
        assert get_bad_case(s, bad_case_id=ids["sent"]).consumed_by_build is None
