"""Single sign-on in a real browser (Debian chromium, Playwright, `streamlit run` with the
secrets `hat ui` writes) against a real OIDC provider on the loopback (`oidc-provider-mock`,
Authlib's server): a user linked to the identity gets their role, an unknown identity is
refused (and audited), a role change in the store ends the session at the next click and the
next sign-in gets the new role, and logging out revokes the session, so the identity cookie
kept from before the logout no longer logs in. Marked `browser`."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import urllib.request

import pytest
from console_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    console_server,
    free_port,
    home_with_registry,
    require_chromium,
    settled,
)
from sqlalchemy import select

from db.audit_repo import list_audit
from db.engine import in_transaction, make_engine, make_session_factory
from db.models import UserSessionRow
from db.sso_repo import link_sso
from db.users_repo import get_user, set_role
from hat_cli.ui_cmd import secrets_path, sso_flags
from hat_core.settings import Settings

pytestmark = pytest.mark.browser
OLGA = "olga@example.com"


@pytest.fixture(scope="module")
def provider():
    """An OIDC provider on 127.0.0.1 that knows `olga` (e-mail olga@example.com, verified);
    any other subject typed into its form signs in with that subject as e-mail."""
    import oidc_provider_mock
    import werkzeug.serving

    app = oidc_provider_mock.app(user_claims=[oidc_provider_mock.User(
        sub="olga", claims={"email": OLGA.upper(), "email_verified": True})])
    server = werkzeug.serving.make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(5)


@pytest.fixture(scope="module")
def server(provider, seeded_template, mlflow_template, tmp_path_factory):
    require_chromium()
    template, _ = seeded_template
    tmp = tmp_path_factory.mktemp("sso-browser")
    shutil.copyfile(template, tmp / "hat.db")
    url = f"sqlite:///{tmp / 'hat.db'}"
    port = free_port()
    sso = {"HAT_SSO_METADATA_URL": f"{provider}/.well-known/openid-configuration",
           "HAT_SSO_CLIENT_ID": "hat-console", "HAT_SSO_CLIENT_SECRET": "client secret",
           "HAT_SSO_REDIRECT_URI": f"http://127.0.0.1:{port}/oauth2callback",
           "HAT_SSO_COOKIE_SECRET": "c" * 40}
    home = home_with_registry(tmp / "home", mlflow_template)
    env = {**os.environ, "HAT_DATABASE_URL": url, "HAT_HOME": str(home), **sso}
    for name in ("HAT_MLFLOW_TRACKING_URI", "PREFECT_API_URL", "HAT_PREFECT_API_URL"):
        env.pop(name, None)
    settings = Settings(home=home, database_url=url, **{k[4:].lower(): v for k, v in sso.items()})
    flags = sso_flags(settings)  # what `hat ui` does: the [auth] secrets, 0600
    assert (secrets_path(settings).stat().st_mode & 0o777) == 0o600
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    in_transaction(sessions, lambda s: link_sso(s, name="operator", identity=OLGA, actor="admin"))
    with console_server(env, tmp / "streamlit.log", port=port, extra=flags) as base:
        yield base, sessions
    engine.dispose()


def sign_in(page, base: str, subject: str) -> None:
    """From the console's login page through the provider's form and back."""
    page.goto(base)
    page.get_by_role("button", name="Log in with SSO").click()
    page.wait_for_url(re.compile(r".*/oauth2/authorize.*"))
    if subject == "olga":
        page.get_by_role("button", name="olga", exact=True).click()
    else:
        page.get_by_placeholder("sub").fill(subject)
        page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(re.compile(re.escape(base) + r"/?$"))
    settled(page)


def click_nav(page, title: str) -> None:
    page.locator("[data-testid='stSidebarNav']").get_by_role(
        "link", name=title, exact=True).click()
    settled(page)


def live_sessions(sessions, name: str) -> list[UserSessionRow]:
    with sessions() as s:
        user = get_user(s, name=name)
        return list(s.scalars(select(UserSessionRow).where(
            UserSessionRow.user_id == user.id, UserSessionRow.revoked_at.is_(None))))


def test_sso_maps_identities_to_users_and_roles(server, provider):
    from playwright.sync_api import sync_playwright

    base, sessions = server
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(30_000)
        sign_in(page, base, "olga")  # linked to the operator user (e-mail in any case)
        page.get_by_text("Signed in as").wait_for()
        assert page.get_by_text("(operator)").is_visible()
        nav = page.locator("[data-testid='stSidebarNav']")
        assert nav.get_by_role("link", name="Edit and submit", exact=True).count() == 1
        assert len(live_sessions(sessions, "operator")) == 1
        click_nav(page, "Diff")
        assert len(live_sessions(sessions, "operator")) == 1  # one session per sign-in

        in_transaction(sessions, lambda s: set_role(s, name="operator", role="viewer",
                                                    actor="admin"))
        click_nav(page, "Versions")  # the next click in the open tab
        page.get_by_text("Your session ended").wait_for()
        sign_in(page, base, "olga")  # a new sign-in: the new role
        page.get_by_text("(viewer)").wait_for()
        assert nav.get_by_role("link", name="Edit and submit", exact=True).count() == 0

        kept = context.cookies()  # the identity cookie as it is before the logout
        page.locator("[data-testid='stSidebarNav']").get_by_role(
            "link", name="Log out", exact=True).click(no_wait_after=True)  # leaves the page
        page.wait_for_url(re.compile(r".*/oauth2/end_session.*"))  # logged out at the provider
        assert live_sessions(sessions, "operator") == []
        replay = browser.new_context()
        replay.add_cookies(kept)
        again = replay.new_page()
        again.set_default_timeout(30_000)
        again.goto(base)
        settled(again)
        again.get_by_text("This sign-in has ended").wait_for()
        assert again.get_by_text("Signed in as").count() == 0
        assert live_sessions(sessions, "operator") == []

        stranger = browser.new_context().new_page()
        stranger.set_default_timeout(30_000)
        sign_in(stranger, base, "mallory@example.com")
        stranger.get_by_text("mallory@example.com is not a HAT Ops user: no access").wait_for()
        assert stranger.get_by_text("Signed in as").count() == 0
        browser.close()
    with sessions() as s:
        refused = [e for e in list_audit(s, entity="login") if e.action == "login.sso_refused"]
    assert [e.after["identity"] for e in refused] == ["mallory@example.com"]
    with urllib.request.urlopen(f"{provider}/.well-known/openid-configuration") as r:
        assert json.load(r)["issuer"] == provider  # the provider the console used
