"""A blind pairwise vote in a real browser: Debian chromium (Playwright) against `streamlit run`
on its own SQLite store holding one open review. A reviewer logs in, opens "Pairwise review",
sees two unlabelled responses, votes "Right is better" with a comment; the vote is in the
store and the page never names the systems. Screenshot: `test-artifacts/ui/pairwise-vote.png`.
Needs `/usr/bin/chromium` (`make browser`); marked `browser`.
"""

from __future__ import annotations

import os

import pytest
from console_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PASSWORD,
    ROOT,
    console_server,
    require_chromium,
    settled,
)

pytestmark = pytest.mark.browser
SYSTEMS = ("checkpoint-SEVEN", "production-SIX")


def seed_store(url: str) -> None:
    from db.engine import in_transaction, make_engine, make_session_factory
    from db.migrate import upgrade
    from db.pairwise_repo import create_pairwise_review
    from db.users_repo import add_user
    from hat_core.evidence.review_items import ReviewItem

    upgrade(url)
    engine = make_engine(url)
    items = [ReviewItem(f"s{i}", f"viewer question {i}", f"answer from A {i}",
                        f"answer from B {i}") for i in range(2)]
    in_transaction(make_session_factory(engine), lambda s: (
        add_user(s, name="rita", role="reviewer", password=PASSWORD, actor="test"),
        create_pairwise_review(s, title="browser blind test", system_a=SYSTEMS[0],
                               system_b=SYSTEMS[1], items=items, actor="test", seed=1)))
    engine.dispose()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_chromium()
    tmp = tmp_path_factory.mktemp("pairwise-browser")
    url = f"sqlite:///{tmp / 'hat.db'}"
    seed_store(url)
    env = {**os.environ, "HAT_DATABASE_URL": url, "HAT_HOME": str(tmp / "home")}
    with console_server(env, tmp / "streamlit.log") as base:
        yield base, url


def test_a_reviewer_votes_blind(server):
    from playwright.sync_api import sync_playwright

    from db.engine import make_engine, make_session_factory
    from db.pairwise_repo import list_votes

    base, url = server
    artifacts = ROOT / "test-artifacts" / "ui"
    artifacts.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(20_000)
        page.goto(base)
        page.get_by_role("textbox", name="User name").fill("rita")
        page.get_by_role("textbox", name="Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.get_by_text("Signed in as").wait_for()
        page.locator("[data-testid='stSidebarNav']").get_by_role(
            "link", name="Pairwise review", exact=True).click()
        settled(page)
        page.get_by_text("answer from A 0").wait_for()
        page.get_by_text("Right is better").click()
        page.get_by_label("Comment").fill("the right one names the price")
        page.get_by_role("button", name="Save vote").click()
        page.get_by_text("Vote saved on item 1: Right is better.").wait_for()
        settled(page)
        page.screenshot(path=str(artifacts / "pairwise-vote.png"), full_page=True)
        body = page.locator("body").inner_text()
        browser.close()
    assert SYSTEMS[0] not in body and SYSTEMS[1] not in body
    assert "you voted on 1 of 2" in body
    engine = make_engine(url)
    with make_session_factory(engine)() as s:
        (vote,) = list_votes(s, review_id=1)
    engine.dispose()
    assert (vote.reviewer, vote.choice, vote.comment) == (
        "rita", "right", "the right one names the price")
