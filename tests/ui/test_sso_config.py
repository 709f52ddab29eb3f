"""The console's SSO settings: a half configuration names every missing setting, the secrets
file `hat ui` writes is owner-only TOML that Streamlit's `[auth]` reads, a stale one goes
when SSO is off, and the identity of a sign-in follows the configured claim."""

from __future__ import annotations

import tomllib

import pytest

from hat_cli.ui_cmd import secrets_path, sso_flags
from hat_core.errors import ConfigError
from hat_core.settings import Settings
from ui.sso_config import sign_in_of, sso_config

SSO = {"sso_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
       "sso_client_id": "hat-console", "sso_client_secret": 'se"cret\\',
       "sso_redirect_uri": "https://console.example.com/oauth2callback",
       "sso_cookie_secret": "c" * 32}
CLAIMS = {"iss": "https://idp", "sub": "u-17", "email": "Ann@Example.com", "iat": 1_800_000_000,
          "nonce": "n1"}


def test_off_unless_configured_and_complete():
    assert sso_config(Settings()) is None
    with pytest.raises(ConfigError) as caught:
        sso_config(Settings(sso_metadata_url=SSO["sso_metadata_url"],
                            sso_redirect_uri="https://console.example.com/",
                            sso_cookie_secret="short"))
    report = caught.value.report()
    for name in ("HAT_SSO_CLIENT_ID", "HAT_SSO_CLIENT_SECRET", "HAT_SSO_COOKIE_SECRET"):
        assert name in report
    assert "must end with /oauth2callback" in report
    with pytest.raises(ConfigError, match="HAT_SSO_ONLY"):
        sso_config(Settings(sso_only=True))


def test_hat_ui_writes_owner_only_secrets_and_removes_stale_ones(tmp_path):
    settings = Settings(home=tmp_path / "home", **SSO)
    (flag,) = sso_flags(settings)
    path = secrets_path(settings)
    assert flag == f"--secrets.files={path}" and (path.stat().st_mode & 0o777) == 0o600
    auth = tomllib.loads(path.read_text())["auth"]
    assert auth == {"redirect_uri": SSO["sso_redirect_uri"], "cookie_secret": "c" * 32,
                    "client_id": "hat-console", "client_secret": 'se"cret\\',
                    "server_metadata_url": SSO["sso_metadata_url"]}
    assert sso_flags(Settings(home=tmp_path / "home")) == [] and not path.exists()


def test_the_identity_follows_the_claim():
    by_email = sso_config(Settings(**SSO))
    sign_in = sign_in_of(CLAIMS, by_email)
    assert sign_in.identity == "ann@example.com" and sign_in.issued_at.year == 2027
    assert sign_in_of(CLAIMS | {"nonce": "n2"}, by_email).key != sign_in.key  # one per sign-in
    unverified = sign_in_of(CLAIMS | {"email_verified": False}, by_email)
    assert unverified == "The identity provider has not verified Ann@Example.com: no access."
    assert "no 'email' claim" in sign_in_of({"sub": "u-17", "iat": 1}, by_email)
    assert "no issue time" in sign_in_of(CLAIMS | {"iat": None}, by_email)
    by_subject = sso_config(Settings(**SSO, sso_claim="sub"))
    assert sign_in_of(CLAIMS, by_subject).identity == "u-17"
