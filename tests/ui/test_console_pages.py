"""AppTest runs of every console page on a seeded SQLite store: login and roles, harness
submission (invalid, then valid), diff, labelling a bad case, promotion refused and allowed,
rollback, the audit log and user management."""

from __future__ import annotations

from pathlib import Path

import pytest
from console_helpers import APP, EXAMPLES, PASSWORD, texts
from streamlit.testing.v1 import AppTest

from db.badcases_repo import get_bad_case
from db.harness_repo import count_versions
from db.release_repo import current_promotion, list_promotions
from db.values import User


def test_login_wrong_password_then_right_then_logout_everywhere(console_db):
    at = AppTest.from_file(APP, default_timeout=30).run()
    at.text_input(key="login_name").input("operator")
    at.text_input(key="login_password").input("wrong-password")
    at.button(key="login_submit").click().run()
    assert "wrong password" in texts(at)
    at.text_input(key="login_password").input(PASSWORD)
    at.button(key="login_submit").click().run()
    assert not at.exception
    assert at.session_state["user"].name == "operator"
    token = at.session_state["session_token"]
    assert token and "session" not in at.query_params  # the token stays on the server

    other = AppTest.from_file(APP, default_timeout=30)  # the same login, another run
    other.session_state["session_token"] = token
    other.run()
    assert other.session_state["user"].name == "operator"
    assert "Signed in as **operator** (operator)" in "\n".join(c.value for c in other.caption)

    at.switch_page("pages/logout.py").run()
    assert "user" not in at.session_state and "session_token" not in at.session_state
    other.run()  # logged out: the token is refused wherever it is held
    assert "user" not in other.session_state
    assert "Your session ended" in texts(other)


def test_pages_by_role(console):
    viewer = console("viewer", "harness_versions")
    assert not viewer.exception
    assert viewer.session_state["user"].role == "viewer"
    assert not viewer.get("button") or all(b.key != "retrain_start" for b in viewer.button)
    admin = console("admin", "users")
    assert not admin.exception
    assert {r for r in admin.dataframe[0].value["name"]} >= {"viewer", "reviewer", "admin"}


def test_viewer_cannot_reach_operator_pages(console):
    at = console("viewer")
    with pytest.raises(ValueError, match="Known pages"):  # not in the viewer's navigation
        at.switch_page("pages/harness_submit.py")
    page = AppTest.from_file(str(Path(APP).parent / "pages" / "harness_submit.py"),
                             default_timeout=30)
    page.session_state["user"] = User(1, "viewer", "viewer", None)
    page.run()  # the page's own guard, should it ever be reached
    assert not page.text_area
    assert "may not harness.submit" in page.error[0].value


def test_submit_invalid_then_valid_harness(console, console_sessions):
    at = console("operator", "harness_submit")
    assert not at.exception
    before = _versions(console_sessions)
    bad = (EXAMPLES / "v4.yaml").read_text().replace("tools: [shipping.estimate]",
                                                     "tools: [shipping.guess]")
    bad = bad.replace("harness: live-stream-avatar", "harness: live-stream-avatar\nbogus: 1")
    at.text_area(key="harness_text").set_value(bad)
    at.button(key="submit_harness").click().run()
    assert at.error and "Not stored" in at.error[0].value
    problems = at.dataframe[0].value
    assert len(problems) >= 2
    assert any("shipping.guess" in p for p in problems["problem"])
    assert all(path for path in problems["path"])
    assert _versions(console_sessions) == before

    good = (EXAMPLES / "v4.yaml").read_text().replace("week 51", "week 52") + "\n"
    good = good.replace("description: ", "description: (edited) ", 1)
    at.text_area(key="harness_text").set_value(good)
    at.text_input(key="submit_note").input("week 52: wording")
    at.button(key="submit_harness").click().run()
    assert not at.exception
    assert "Stored version 5" in at.success[0].value
    assert _versions(console_sessions) == before + 1


def test_diff_of_two_versions(console):
    at = console("viewer", "harness_diff")
    at.number_input(key="diff_before").set_value(1)
    at.number_input(key="diff_after").set_value(2).run()
    assert not at.exception
    assert any("v1 → v2" in s.value for s in at.subheader)
    changes = at.dataframe[0].value
    assert set(changes["class"]) <= {"surface", "semantic"}
    assert len(changes) > 0
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Surface changes"]) + int(metrics["Semantic changes"]) == len(changes)


def test_reviewer_labels_a_bad_case(console, console_sessions):
    at = console("reviewer", "bad_cases")
    assert not at.exception
    case_id = at.selectbox(key="bc_case").value
    at.radio(key="bc_verdict").set_value("disagree")
    at.selectbox(key="bc_correct").set_value("wrong_arguments")
    at.text_area(key="bc_comment").input("the tool was right, the arguments were not")
    at.checkbox(key="bc_training").check()
    at.button(key="bc_save").click().run()
    assert not at.exception
    assert "saved" in at.success[0].value
    with console_sessions() as s:
        case = get_bad_case(s, bad_case_id=case_id)
    assert (case.review_state, case.label, case.reviewer, case.send_to_training) == \
        ("confirmed", "wrong_arguments", "reviewer", True)


def test_viewer_cannot_label(console):
    at = console("viewer", "bad_cases")
    assert not at.exception
    assert not [b for b in at.button if b.key == "bc_save"]


def _aliases(console_db) -> dict[str, str]:
    from demo_data import REGISTRY

    from hat_core.release.registry import ModelRegistry
    from hat_core.settings import load_settings

    return ModelRegistry(load_settings().resolved_mlflow_uri()).aliases(REGISTRY)


def test_promotion_refused_and_allowed(console, console_db, console_sessions):
    ids = console_db[1]
    reviewer = console("reviewer", "release")
    assert not [b for b in reviewer.button if b.key == "promote_submit"]
    assert "operators and admins promote" in texts(reviewer)
    assert "B: challenger" in [h.value for h in reviewer.subheader]

    operator = console("operator", "release")
    assert "live-stream-avatar v2" in texts(operator)   # the challenger (passed, newer)
    operator.selectbox(key="promote_model").set_value(ids["mv_weak"])
    operator.button(key="promote_submit").click().run()
    refused = operator.error[0].value
    assert "Promotion refused" in refused and "only an admin" in refused
    assert "gates.t2:" in refused                           # each failed gate with its reason
    with console_sessions() as s:
        assert current_promotion(s, slot="ab").model_version_id == ids["mv_base"]
    assert _aliases(console_db) == {"champion": "1"}

    operator.selectbox(key="promote_model").set_value(ids["mv_good"])
    operator.button(key="promote_submit").click().run()
    assert not operator.exception
    assert "Promoted live-stream-avatar v2" in operator.success[0].value
    with console_sessions() as s:
        assert current_promotion(s, slot="ab").model_version_id == ids["mv_good"]
    assert _aliases(console_db) == {"champion": "2", "previous-champion": "1"}

    admin = console("admin", "release")
    admin.selectbox(key="promote_model").set_value(ids["mv_weak"])
    admin.button(key="promote_submit").click().run()
    assert "override needs a reason" in admin.error[0].value
    admin.text_input(key="promote_reason").input("compliance hotfix, T2 gate known flaky")
    admin.button(key="promote_submit").click().run()
    assert "(override)" in admin.success[0].value
    with console_sessions() as s:
        champion = current_promotion(s, slot="ab")
    assert (champion.model_version_id, champion.override) == (ids["mv_weak"], True)
    assert _aliases(console_db) == {"champion": "3", "previous-champion": "2"}


def test_an_inconclusive_candidate_is_shown_and_needs_an_override(console, console_db,
                                                                  console_sessions):
    from demo_data import REGISTRY, add_inconclusive_model

    from hat_core.release.registry import ModelRegistry
    from hat_core.settings import load_settings

    ids = console_db[1]
    with console_sessions.begin() as s:
        mv = add_inconclusive_model(s, job_id=ids["job_running"], version="4")
    ModelRegistry(load_settings().resolved_mlflow_uri()).client.create_model_version(
        REGISTRY, source="demo/4")
    operator = console("operator", "release")
    table = operator.dataframe[0].value
    row = table[table["id"] == mv].iloc[0]
    assert row["gates"] == "inconclusive"
    assert row["t1"].startswith("? ") and "too few cases: 8 < min_cases 30" in row["t1"]
    assert row["latency"].startswith("✔ ")
    assert "live-stream-avatar v2" in texts(operator)  # still the challenger, not v4
    operator.selectbox(key="promote_model").set_value(mv)
    operator.button(key="promote_submit").click().run()
    refused = operator.error[0].value
    assert "has inconclusive gates (t1, t2)" in refused and "only an admin" in refused
    assert "gates.t1: inconclusive:" in refused
    admin = console("admin", "release")
    admin.selectbox(key="promote_model").set_value(mv)
    admin.button(key="promote_submit").click().run()
    assert "override needs a reason" in admin.error[0].value
    admin.text_input(key="promote_reason").input("reviewed the cases by hand")
    admin.button(key="promote_submit").click().run()
    assert "(override)" in admin.success[0].value
    with console_sessions() as s:
        champion = current_promotion(s, slot="ab")
    assert (champion.model_version_id, champion.override) == (mv, True)
    assert champion.reason == "reviewed the cases by hand"
    assert _aliases(console_db)["champion"] == "4"
    promoted = console("reviewer", "release")
    assert any("gates inconclusive: ✔ latency · ? t1 · ? t2" in c.value
               for c in promoted.caption)


def test_rollback_restores_the_previous_champion(console, console_db, console_sessions):
    ids = console_db[1]
    admin = console("admin", "release")
    admin.selectbox(key="promote_model").set_value(ids["mv_good"])
    admin.button(key="promote_submit").click().run()
    operator = console("operator", "release")
    operator.button(key="rollback_ab").click().run()  # no reason: refused, nothing changes
    assert "give the reason for the rollback first" in operator.error[0].value
    with console_sessions() as s:
        assert current_promotion(s, slot="ab").model_version_id == ids["mv_good"]
    operator.text_input(key="rollback_reason").input("v2 regressed on t2")
    operator.button(key="rollback_ab").click().run()
    assert not operator.exception
    assert "Rolled back slot ab to version 1 (was 2)" in operator.success[0].value
    with console_sessions() as s:
        history = list_promotions(s, slot="ab")
    assert history[0].model_version_id == ids["mv_base"]
    assert history[0].reason == "rollback from version 2: v2 regressed on t2"
    assert _aliases(console_db) == {"champion": "1", "previous-champion": "2"}
    audit = console("operator", "audit")
    assert "promotion.add" in set(audit.dataframe[0].value["action"])


def test_promotion_with_mlflow_down_changes_nothing(console, console_db, console_sessions,
                                                    monkeypatch):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HAT_MLFLOW_TRACKING_URI", f"http://127.0.0.1:{port}")
    with console_sessions() as s:
        before = list_promotions(s)
    operator = console("operator", "release")
    operator.selectbox(key="promote_model").set_value(console_db[1]["mv_good"])
    operator.button(key="promote_submit").click().run()
    assert not operator.exception and not operator.success
    message = operator.error[0].value
    assert f"MLflow at http://127.0.0.1:{port} is not reachable" in message
    assert "nothing was changed" in message
    with console_sessions() as s:
        assert list_promotions(s) == before


def test_runs_job_compare_pages(console, console_db):
    runs = console("operator", "runs")
    assert not runs.exception
    assert len(runs.dataframe[0].value) == 4
    runs.button(key="retrain_start").click().run()
    assert "No Prefect API is configured" in runs.error[0].value
    job = console("viewer", "job")
    job.number_input(key="job_page_id").set_value(console_db[1]["job_good"]).run()
    assert not job.exception
    assert len(job.get("vega_lite_chart")) == 3  # reward curves, training curves, latency
    compare = console("viewer", "compare")
    assert not compare.exception
    rows = compare.dataframe[0].value
    assert "delta" in rows.columns and len(rows) >= 5


def _versions(console_sessions) -> int:
    with console_sessions() as s:
        return count_versions(s)
