"""The Evidence pages in a real Streamlit AppTest on a migrated SQLite store: A/B upload,
analysis and save; a blind pairwise review created from JSONL, voted on, closed and only then
unblinded (no identity anywhere in the rendered page while open); judge calibration and its
gate; and the role refusals of each."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from console_helpers import APP, PASSWORD, logged_in, texts

from db.engine import in_transaction, make_engine, make_session_factory

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "ab" / "sample.csv"
SYSTEM_A, SYSTEM_B = "avatar v7", "avatar v6"  # the model versions the fixture registers
ROLE_NAMES = ("viewer", "reviewer", "operator", "admin")


@pytest.fixture(scope="module")
def evidence_template(tmp_path_factory) -> Path:
    from db.migrate import upgrade
    from db.release_repo import register_model_version
    from db.users_repo import add_user

    path = tmp_path_factory.mktemp("evidence") / "template.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    engine = make_engine(url)

    def fill(s):
        for role in ROLE_NAMES:
            add_user(s, name=role, role=role, password=PASSWORD, actor="test")
        for version in ("6", "7"):
            register_model_version(s, registry_name="avatar", version=version)

    in_transaction(make_session_factory(engine), fill)
    engine.dispose()
    return path


@pytest.fixture
def store(evidence_template, tmp_path, monkeypatch):
    """A fresh copy of the template configured for the console; yields its session factory."""
    path = tmp_path / "hat.db"
    shutil.copyfile(evidence_template, path)
    monkeypatch.setenv("HAT_DATABASE_URL", f"sqlite:///{path}")
    monkeypatch.setenv("HAT_HOME", str(tmp_path / "home"))
    engine = make_engine(f"sqlite:///{path}")
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def page(store):
    """`page(role, file)`: an AppTest of the console on `ui/pages/<file>.py` as `role`."""
    from streamlit.testing.v1 import AppTest

    def open_as(role: str, file: str):
        at = logged_in(AppTest.from_file(APP, default_timeout=60), store, role)
        at.run()
        at.switch_page(f"pages/{file}.py").run()
        assert not at.exception, at.exception
        return at

    return open_as


def rendered(at) -> str:
    """Everything the run put on the page: every element's protobuf (text, tables, options)."""
    out = []

    def walk(node):
        if getattr(node, "proto", None) is not None:
            out.append(str(node.proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def table(at, n: int = 0):
    return at.dataframe[n].value


# --- A/B tests ------------------------------------------------------------------------------

def upload_sample(at, data: bytes | None = None, name: str = "sample.csv"):
    at.file_uploader(key="ab_file").set_value((name, data or SAMPLE.read_bytes(), "text/csv"))
    return at.run()


def test_ab_upload_analyse_and_save_as_operator(page, store):
    from db.ab_repo import list_ab_analyses

    at = upload_sample(page("operator", "ab_tests"))
    at.number_input(key="ab_split").set_value(0.8)
    at.multiselect(key="ab_metrics").set_value(["gmv", "detail_page_views"])
    at.number_input(key="ab_boot").set_value(200)
    at.button(key="ab_run").click().run()
    assert not at.exception, at.exception
    rows = table(at)
    assert list(rows["metric"]) == ["gmv", "detail_page_views"]
    assert {"95% CI (Welch)", "p adjusted", "CI (bootstrap)", "days agreeing",
            "Q p (days)"} <= set(rows.columns)
    assert "control share 0.800 against the expected 0.800" in texts(at)
    assert len(at.get("vega_lite_chart")) == 2  # overall and per-day intervals
    at.text_input(key="ab_name").set_value("week 49")
    at.button(key="ab_save_button").click().run()
    assert "Saved A/B analysis" in texts(at)
    with store() as s:
        (saved,) = list_ab_analyses(s)
    assert saved.name == "week 49" and saved.metrics == ["gmv", "detail_page_views"]
    assert saved.created_by == "operator" and saved.n_users == 600
    assert list(table(at)["name"]) == ["week 49"]  # the saved tab lists it


def test_ab_viewer_analyses_but_cannot_save(page, store):
    from db.ab_repo import list_ab_analyses

    at = upload_sample(page("viewer", "ab_tests"))
    at.number_input(key="ab_boot").set_value(0)
    at.button(key="ab_run").click().run()
    assert len(table(at)) == 3 and "Operators and admins can save" in texts(at)
    assert not [b for b in at.button if b.key == "ab_save_button"]
    with store() as s:
        assert list_ab_analyses(s) == []


def test_ab_a_broken_file_lists_its_problems(page):
    broken = b"user_id,arm,day,gmv\nu1,control,1,abc\nu2,treatment,1,3\nu3,ctrl,1,2\n"
    at = upload_sample(page("operator", "ab_tests"), broken, name="broken.csv")
    at.number_input(key="ab_boot").set_value(0)
    at.button(key="ab_run").click().run()
    errors = "\n".join(e.value for e in at.error)
    assert "line 2" in errors and "gmv" in errors and "ctrl" in errors
    assert not at.dataframe


# --- pairwise review ------------------------------------------------------------------------

ITEMS = [{"scenario_id": f"s{i}", "prompt": f"viewer asks {i}", "response_a": f"reply-A-{i}",
          "response_b": f"reply-B-{i}", "judge": "a"} for i in range(4)]


def create_review(page, items=ITEMS):
    at = page("operator", "pairwise")
    at.radio(key="pw_mode").set_value("New review").run()
    at.text_input(key="pw_title").set_value("week 49 blind test")
    at.selectbox(key="pw_a").set_value(SYSTEM_A)
    at.selectbox(key="pw_b").set_value(SYSTEM_B)
    jsonl = "\n".join(json.dumps(x) for x in items).encode()
    at.file_uploader(key="pw_file").set_value(("items.jsonl", jsonl, "application/jsonl"))
    at.button(key="pw_create").click().run()
    assert not at.exception, at.exception
    return at


def vote_all(page, role: str, prefer: str):
    """`role` votes on every item for the response starting `reply-<prefer>`."""
    at = page(role, "pairwise")
    for _ in ITEMS:
        item_box = at.selectbox(key=next(s.key for s in at.selectbox
                                         if s.key.startswith("pw_item_")))
        item_id = item_box.value
        left = [t.value for t in at.text if t.value.startswith("reply-")][0]
        choice = "left" if left.startswith(f"reply-{prefer}") else "right"
        at.radio(key=f"pw_choice_{item_id}").set_value(choice)
        at.text_area(key=f"pw_comment_{item_id}").set_value(f"{role} liked {choice}")
        at.button(key=f"pw_cast_{item_id}").click().run()
        assert "Vote saved" in texts(at), texts(at)
    return at


def test_pairwise_create_vote_close_unblind(page, store):
    created = create_review(page)
    assert "Opened review #1 with 4 items" in texts(created)
    at = vote_all(page, "reviewer", prefer="A")
    assert "you voted on 4 of 4" in texts(at)
    for role in ("reviewer", "operator", "viewer"):
        shown = rendered(page(role, "pairwise"))
        assert "week 49 blind test" in shown and "reply-A-0" in shown
        assert SYSTEM_A not in shown and SYSTEM_B not in shown, role
    closing = page("operator", "pairwise")
    closing.checkbox(key="pw_sure_1").check().run()
    closing.button(key="pw_close_1").click().run()
    assert "Review #1 closed and unblinded" in texts(closing)
    shown = rendered(closing)
    assert SYSTEM_A in shown and SYSTEM_B in shown  # the same check sees them once closed
    assert f"A = {SYSTEM_A} · B = {SYSTEM_B}" in texts(closing)
    by_vote = table(closing, 1).iloc[0]
    assert (by_vote["A wins"], by_vote["ties"], by_vote["B wins"]) == (4, 0, 0)
    assert by_vote["sign test p"] == "0.125" and by_vote["A win rate"] == "100.0%"
    items = table(closing, 2)
    assert list(items["majority"]) == ["A"] * 4 and "reviewer liked" in items["comments"][0]


def test_pairwise_roles(page):
    create_review(page)
    viewer = page("viewer", "pairwise")
    assert "Viewers can read the items; reviewers vote." in texts(viewer)
    assert not [f for f in viewer.button if f.key and f.key.startswith("pw_cast_")]
    reviewer = page("reviewer", "pairwise")
    assert not [r for r in reviewer.radio if r.key == "pw_mode"]  # cannot create
    assert not [b for b in reviewer.button if b.key == "pw_close_1"]  # cannot close
    cast = next(b for b in reviewer.button if b.key and b.key.startswith("pw_cast_"))
    cast.click().run()  # no side picked (nothing is preselected): refused, nothing stored
    assert "Pick left, tie or right first." in texts(reviewer)
    assert "0 vote(s) so far" in texts(reviewer)


def test_pairwise_bad_jsonl_lists_every_problem(page, store):
    from db.pairwise_repo import list_pairwise_reviews

    at = create_review(page, items=[{"scenario_id": "s1", "response_a": "x"},
                                    {"scenario_id": "s2", "response_a": "x", "response_b": "y",
                                     "judge": "maybe"}])
    errors = "\n".join(e.value for e in at.error)
    assert "items.jsonl:1: response_b: missing" in errors
    assert "items.jsonl:2: judge: 'maybe' is not one of a, b, tie" in errors
    with store() as s:
        assert list_pairwise_reviews(s) == []


# --- judge calibration ----------------------------------------------------------------------

def test_judge_page_shows_kappa_and_the_gate_at_the_configured_threshold(page, monkeypatch):
    create_review(page)
    vote_all(page, "reviewer", prefer="A")  # judge says a everywhere: 4/4 agree
    vote_all(page, "admin", prefer="B")  # 0/4 agree
    closing = page("admin", "pairwise")
    closing.checkbox(key="pw_sure_1").check().run()
    closing.button(key="pw_close_1").click().run()
    monkeypatch.setenv("HAT_JUDGE_MIN_KAPPA", "0.5")
    monkeypatch.setenv("HAT_JUDGE_MIN_ITEMS", "8")
    at = page("viewer", "judge")
    summary = table(at).set_index("source")
    # 8 votes; judge always a; humans a 4, b 4: agreement 0.5, p_e = 0.5, kappa 0
    assert summary.loc["pairwise", "items"] == 8
    assert summary.loc["pairwise", "agreement"] == "50.0%"
    assert summary.loc["pairwise", "Cohen's kappa"] == "0.000"
    assert summary.loc["pairwise", "gate"] == "refused"
    assert "Gate refused: kappa 0.000 < 0.5 on 8 items" in texts(at)
    assert "Gate refused: no bad_cases items" in texts(at)
    assert "kappa at least 0.5 on at least 8 items" in texts(at)


@pytest.mark.parametrize("file", ["ab_tests", "pairwise", "judge"])
def test_each_page_guards_itself(store, file):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(APP).parent / "pages" / f"{file}.py"), default_timeout=60)
    at.run()
    assert "Not allowed: the anonymous role may not evidence.view." in texts(at)
    assert not at.dataframe and not at.file_uploader
