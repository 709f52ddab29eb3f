"""Access in a real browser (Debian chromium, Playwright, `streamlit run`): a role change and
a removal made in the store take effect in an already open tab at its next click, and the
session token never appears in the page's URL. Marked `browser`."""

from __future__ import annotations

import os
import re
import shutil

import pytest
from console_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    click_nav,
    console_server,
    home_with_registry,
    log_in,
    require_chromium,
)

from db.engine import in_transaction, make_engine, make_session_factory
from db.users_repo import remove_user, set_role

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(seeded_template, mlflow_template, tmp_path_factory):
    require_chromium()
    template, _ = seeded_template
    tmp = tmp_path_factory.mktemp("access-browser")
    shutil.copyfile(template, tmp / "hat.db")
    url = f"sqlite:///{tmp / 'hat.db'}"
    env = {**os.environ, "HAT_DATABASE_URL": url,
           "HAT_HOME": str(home_with_registry(tmp / "home", mlflow_template))}
    for name in ("HAT_MLFLOW_TRACKING_URI", "PREFECT_API_URL", "HAT_PREFECT_API_URL"):
        env.pop(name, None)
    with console_server(env, tmp / "streamlit.log") as base:
        yield base, url


def test_a_role_change_and_a_removal_reach_an_open_tab(server):
    from playwright.sync_api import sync_playwright

    base, url = server
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(20_000)
        log_in(page, base, "admin")  # the longest menu: every section shown, no toolbar
        nav = page.locator("[data-testid='stSidebarNav']")
        assert nav.get_by_text(re.compile(r"^View \d+ more$")).count() == 0
        assert nav.get_by_role("link", name="Users", exact=True).is_visible()
        assert page.get_by_role("button", name="Deploy").count() == 0
        page.goto(base)  # a new session
        log_in(page, base, "operator")
        assert "session" not in page.url
        nav = page.locator("[data-testid='stSidebarNav']")
        assert nav.get_by_role("link", name="Edit and submit", exact=True).count() == 1

        in_transaction(sessions, lambda s: set_role(s, name="operator", role="viewer",
                                                    actor="admin"))
        click_nav(page, "Diff")  # the next click in the open tab
        page.get_by_text("Your session ended").wait_for()  # a role change ends sessions
        log_in(page, base, "operator")
        page.get_by_text("(viewer)").wait_for()
        assert nav.get_by_role("link", name="Edit and submit", exact=True).count() == 0

        in_transaction(sessions, lambda s: remove_user(s, name="operator", actor="admin"))
        click_nav(page, "Diff")
        page.get_by_text("Your session ended").wait_for()
        page.get_by_role("button", name="Log in").wait_for()
        browser.close()
    engine.dispose()
