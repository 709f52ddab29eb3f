"""The console in a real browser: Debian chromium driven by Playwright against `streamlit run`.

One story as an operator: log in, reload (the login is not carried over: log in again),
submit a harness edit, see its diff, label a bad case, promote a checkpoint into the A/B
slot (the MLflow aliases move, as with `hat promote`), and be refused a candidate whose gates
were inconclusive. Screenshots go to `test-artifacts/ui/`.
Needs `/usr/bin/chromium` (`make browser`); marked `browser`.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest
from console_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    EXAMPLES,
    PASSWORD,
    ROOT,
    console_server,
    home_with_registry,
    require_chromium,
    settled,
)

pytestmark = pytest.mark.browser
ARTIFACTS = ROOT / "test-artifacts" / "ui"


@pytest.fixture(scope="module")
def server(seeded_template, mlflow_template, tmp_path_factory):
    require_chromium()
    template, ids = seeded_template
    tmp = tmp_path_factory.mktemp("browser")
    shutil.copyfile(template, tmp / "hat.db")
    _add_inconclusive_candidate(f"sqlite:///{tmp / 'hat.db'}", ids["job_running"])
    env = {**os.environ, "HAT_DATABASE_URL": f"sqlite:///{tmp / 'hat.db'}",
           "HAT_HOME": str(home_with_registry(tmp / "home", mlflow_template))}
    env.pop("HAT_MLFLOW_TRACKING_URI", None)
    env.pop("PREFECT_API_URL", None)
    env.pop("HAT_PREFECT_API_URL", None)
    with console_server(env, tmp / "streamlit.log") as url:
        yield url, ids, tmp / "home"


def _add_inconclusive_candidate(url: str, job_id: int) -> None:
    from demo_data import add_inconclusive_model

    from db.engine import make_engine, make_session_factory

    engine = make_engine(url)
    with make_session_factory(engine).begin() as s:
        add_inconclusive_model(s, job_id=job_id, version="4")
    engine.dispose()


@pytest.fixture(scope="module")
def page(server):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        tab.set_default_timeout(20_000)
        yield tab
        browser.close()


def _shot(page, name: str) -> None:
    settled(page)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _nav(page, title: str) -> None:
    nav = page.locator("[data-testid='stSidebarNav']")
    more = nav.get_by_text(re.compile(r"^View \d+ more$"))  # a long menu is folded
    if more.count():
        more.first.click()
    nav.get_by_role("link", name=title, exact=True).click()
    settled(page)


def test_operator_story(page, server):
    url, ids, home = server
    page.goto(url)
    page.get_by_role("textbox", name="User name").fill("operator")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_text("Signed in as").wait_for()
    page.get_by_role("heading", name="Harness versions").wait_for()
    page.locator("[data-testid='stDataFrame']").first.wait_for()
    _shot(page, "01-versions")

    assert "session" not in page.url  # the session token never reaches the browser
    page.reload()  # a new Streamlit session: the login is not carried over
    page.get_by_role("button", name="Log in").wait_for()
    page.get_by_role("textbox", name="User name").fill("operator")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_text("Signed in as").wait_for()

    _nav(page, "Edit and submit")
    edited = (EXAMPLES / "v4.yaml").read_text().replace(
        "description: ", "description: (edited) ", 1)
    editor = page.get_by_label("Harness (YAML or JSON)")
    editor.fill(edited)
    editor.press("Control+Enter")
    settled(page)
    page.get_by_label("Note: what changed and why").fill("browser edit")
    page.get_by_role("button", name="Validate and submit").click()
    page.get_by_text("Stored version 5").wait_for()
    _shot(page, "02-submitted")

    _nav(page, "Diff")
    page.get_by_text("v4 → v5").wait_for()
    page.get_by_text("surface only").first.wait_for()
    page.locator("table.diff").first.wait_for()
    _shot(page, "03-diff")

    _nav(page, "Bad cases")
    page.get_by_text("matching bad case").wait_for()
    page.get_by_text("Send to training data").click()
    page.get_by_role("button", name="Save review").click()
    page.get_by_text("sent to training data").wait_for()
    _shot(page, "04-bad-case-labelled")

    _nav(page, "Release")
    page.get_by_text("Candidates and their gates").wait_for()
    form = page.locator("[data-testid='stForm']")
    form.locator("[data-testid='stSelectbox']").first.click()
    page.get_by_role("option", name="live-stream-avatar v2, harness live-stream-avatar v2").click()
    form.get_by_role("button", name="Promote").click()
    page.get_by_text("Promoted live-stream-avatar v2").wait_for()
    page.get_by_text(re.compile(r"gates passed: ✔ bad_case_rate")).first.wait_for()
    _shot(page, "05-promoted")
    form.locator("[data-testid='stSelectbox']").first.click()
    page.get_by_role("option", name="live-stream-avatar v4, harness live-stream-avatar v4").click()
    form.get_by_role("button", name="Promote").click()
    page.get_by_text(re.compile(r"has inconclusive gates \(t1, t2\)")).wait_for()
    _shot(page, "05b-inconclusive-refused")
    from hat_core.release.registry import ModelRegistry

    registry = ModelRegistry(f"sqlite:///{home / 'mlflow.db'}")
    assert registry.aliases("live-stream-avatar") == {"champion": "2", "previous-champion": "1"}

    _nav(page, "Job")
    page.get_by_text("Reward components").first.wait_for()
    _shot(page, "06-job")
