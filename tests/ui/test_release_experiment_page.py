"""The Release page shows the live A/B experiment: its split, users and requests per arm
from the gateway's exposures, and the SRM status on the assignment log."""

from __future__ import annotations

from console_helpers import texts

from db.engine import in_transaction
from db.experiments_repo import create_experiment
from db.exposures_repo import add_exposures
from hat_core.serving.exposure import Exposure


def expose(console_sessions, experiment_id: int, arms: dict[str, int], start: int = 0) -> None:
    rows = [Exposure(experiment_id, f"{arm}-{i}", arm, "m/1", None, "1", f"{arm}{i}", 3.0,
                     200 if i else 503)
            for arm, n in arms.items() for i in range(start, start + n)]
    in_transaction(console_sessions, lambda s: add_exposures(s, exposures=rows))


def test_the_release_page_shows_the_live_split_and_srm(console, console_sessions):
    before = console("reviewer", "release")
    assert "No experiment yet" in texts(before)
    exp = in_transaction(console_sessions, lambda s: create_experiment(
        s, name="wk49", treatment_share=0.2, actor="olga"))
    expose(console_sessions, exp.id, {"control": 80, "treatment": 20})
    ok = console("reviewer", "release")
    assert not ok.exception
    assert "SRM ok" in texts(ok) and "80% / 20%" in texts(ok)
    table = next(d.value for d in ok.dataframe if "users" in d.value.columns)
    assert set(table["users"]) == {80, 20} and set(table["failed requests"]) == {1}
    expose(console_sessions, exp.id, {"treatment": 60}, start=20)  # 80 / 80, not 80 / 20
    broken = console("reviewer", "release")
    assert "Sample ratio mismatch" in broken.error[0].value
