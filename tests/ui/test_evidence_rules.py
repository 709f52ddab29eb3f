"""The Evidence pages' rules without Streamlit: menus and permissions, the A/B table and
chart data from a report dict, the pairwise rows, seeds and refusals by role."""

from __future__ import annotations

from pathlib import Path

import pytest

from db.values import User
from hat_core.errors import ConfigError
from ui.auth import PermissionDenied
from ui.nav import pages_for
from ui.views.ab import analyze_upload, day_points, interval_points, lift_rows, srm_line
from ui.views.pairwise import close_review, create_review, first_unvoted, parse_seed, vote

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ab" / "sample.csv"
EVIDENCE = {"A/B tests", "Pairwise review", "Judge calibration"}


@pytest.mark.parametrize("role", ["viewer", "reviewer", "operator", "admin"])
def test_every_role_sees_the_evidence_pages(role):
    assert {p.title for p in pages_for(role)["Evidence"]} == EVIDENCE


def test_no_role_no_pages():
    assert "Evidence" not in pages_for("intruder")


@pytest.fixture(scope="module")
def upload():
    from hat_core.evidence.ab import AbConfig

    return analyze_upload("sample.csv", SAMPLE.read_bytes(), control="control",
                          treatment="treatment", metrics=["gmv"],
                          config=AbConfig(expected_split=0.5, bootstrap=200))


def test_an_upload_is_analysed_like_the_cli(upload):
    assert (upload.n_rows, upload.n_users, len(upload.sha256)) == (3000, 600, 64)
    (row,) = lift_rows(upload.result)
    welch = upload.result["metrics"][0]["welch"]
    assert row["lift"] == f"{welch['lift']:+.2%}"
    assert row["95% CI (Welch)"] == f"[{welch['ci_low']:+.2%}, {welch['ci_high']:+.2%}]"
    mismatch, text = srm_line(upload.result)  # 480/120 against 50/50: a gross mismatch
    assert mismatch and "expected 0.500" in text
    assert [p["method"] for p in interval_points(upload.result)] == [
        "welch", "bootstrap-percentile"]
    assert len(day_points(upload.result)) == 5


def test_an_unusable_upload_raises_with_problems():
    with pytest.raises(ConfigError) as err:
        analyze_upload("x.csv", b"user_id,arm\nu1,control\n", control="control",
                       treatment="treatment", metrics=None, config=None)
    assert any("day" in str(p) for p in err.value.problems)


def test_seeds():
    assert parse_seed(" ") is None and parse_seed("42") == 42
    with pytest.raises(ConfigError, match="bad seed"):
        parse_seed("-1")


def test_first_unvoted():
    assert first_unvoted([5, 6, 7], {5}) == 1 and first_unvoted([5, 6], {5, 6}) == 0


def user(role: str) -> User:
    from datetime import UTC, datetime

    return User(1, role, role, datetime.now(UTC))


@pytest.mark.parametrize(("role", "action"), [
    ("reviewer", lambda u: create_review(None, user=u, title="t", system_a="a", system_b="b",
                                         jsonl="", source="x")),
    ("reviewer", lambda u: close_review(None, user=u, review_id=1)),
    ("viewer", lambda u: vote(None, user=u, item_id=1, choice="tie", comment="")),
])
def test_actions_refuse_roles_before_touching_the_store(role, action):
    with pytest.raises(PermissionDenied):
        action(user(role))
