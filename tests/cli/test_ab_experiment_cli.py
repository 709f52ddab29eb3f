"""`hat ab analyze --experiment ID` from the store's exposures and outcome events agrees with
`hat ab analyze FILE` on the same data; experiments, outcomes and their refusals."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from db.engine import in_transaction, make_engine, make_session_factory
from db.experiments_repo import create_experiment
from db.exposures_repo import add_exposures, arm_counts
from hat_cli.main import app as hat
from hat_core.serving.exposure import Exposure

runner = CliRunner()


@pytest.fixture
def store(databases, monkeypatch, tmp_path):
    url = databases.migrated("sqlite")
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HAT_DATABASE_URL", url)
    engine = make_engine(url)
    yield make_session_factory(engine)
    engine.dispose()


def expose(sessions, experiment_id: int, frame: pd.DataFrame) -> None:
    """One exposure per (user, day) row of the file: the user's arm as the file has it."""
    rows = [Exposure(experiment_id, u, a, "hat-agent/1", None, "1", f"r{i}", 12.0, 200)
            for i, (u, a) in enumerate(zip(frame.user_id, frame.arm, strict=True))]
    in_transaction(sessions, lambda s: add_exposures(s, exposures=rows))


def invoke(*args: str):
    result = runner.invoke(hat, ["ab", *args])
    assert result.exit_code == 0, result.output
    return result


def test_analyze_from_the_store_agrees_with_the_file(store, tmp_path):
    csv = tmp_path / "ab.csv"
    invoke("simulate", "--out", str(csv), "--n-control", "160", "--n-treatment", "40",
           "--days", "3", "--true-lift", "0.2", "--seed", "3")
    frame = pd.read_csv(csv, dtype=str)
    exp = in_transaction(store, lambda s: create_experiment(
        s, name="wk49", treatment_share=0.2, actor="olga"))
    expose(store, exp.id, frame)
    out = invoke("outcomes", str(csv), "--experiment", "wk49")
    assert f"stored {len(frame) * 6} outcome events" in out.output
    from_file = json.loads(invoke("analyze", str(csv), "--json", "--expected-split", "0.8",
                                  "--bootstrap", "200").stdout)
    from_store = json.loads(invoke("analyze", "--experiment", "wk49", "--json",
                                   "--bootstrap", "200").stdout)
    assert from_store == from_file
    assert from_store["srm"]["n_control"] == 160 and not from_store["srm"]["mismatch"]
    with store() as s:
        counts = {c.arm: c.users for c in arm_counts(s, experiment_id=exp.id)}
    assert counts == {"control": 160, "treatment": 40}


def test_the_srm_check_reads_the_assignment_log(store, tmp_path):
    csv = tmp_path / "ab.csv"
    invoke("simulate", "--out", str(csv), "--n-control", "160", "--n-treatment", "40",
           "--days", "1")
    in_transaction(store, lambda s: create_experiment(s, name="half", treatment_share=0.5,
                                                      actor="olga"))
    expose(store, 1, pd.read_csv(csv, dtype=str))
    invoke("outcomes", str(csv), "--experiment", "half", "--metrics", "gmv")
    result = runner.invoke(hat, ["ab", "analyze", "--experiment", "1", "--json",
                                 "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["srm"]["mismatch"] and report["settings"]["expected_split"] == 0.5
    assert "sample ratio mismatch" in result.stderr


def test_outcomes_are_all_or_nothing_and_never_twice(store, tmp_path):
    csv = tmp_path / "ab.csv"
    invoke("simulate", "--out", str(csv), "--n-control", "4", "--n-treatment", "4",
           "--days", "1")
    in_transaction(store, lambda s: create_experiment(s, name="wk50", treatment_share=0.5,
                                                      actor="olga"))
    invoke("outcomes", str(csv), "--experiment", "wk50")
    again = runner.invoke(hat, ["ab", "outcomes", str(csv), "--experiment", "wk50"])
    assert again.exit_code == 2 and "already recorded" in again.output
    unknown = runner.invoke(hat, ["ab", "outcomes", str(csv), "--experiment", "nope"])
    assert unknown.exit_code == 2 and "known: wk50" in unknown.output
    neither = runner.invoke(hat, ["ab", "analyze"])
    assert neither.exit_code == 2 and "--experiment" in neither.output
    bad_split = runner.invoke(hat, ["ab", "experiment", "create", "x1", "--split", "1.5"])
    assert bad_split.exit_code == 2 and "strictly between 0 and 1" in bad_split.output
