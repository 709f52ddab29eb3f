"""The console's single sign-on settings: checked, written where Streamlit reads them, and
the identity a sign-in carries.

    config = sso_config(load_settings())     # None when SSO is off; ConfigError if half set
    write_secrets(config, home / "console" / "secrets.toml")   # `hat ui` does this, 0600
    sign_in = sign_in_of(st.user.to_dict(), config)   # an `SsoSignIn`, or the refusal text

SSO is on when `HAT_SSO_METADATA_URL` is set; then the client id and secret, the redirect URI
(the console's public URL + `/oauth2callback`) and a cookie secret of 32+ characters must be
set too. Streamlit's `st.login` reads them from the `[auth]` section of a `secrets.toml`, so
`hat ui` writes that file from the settings (temporary file, then rename; mode 0600) and
points Streamlit at it. The identity is the ID token's `HAT_SSO_CLAIM` (`email`, the default,
or `sub`); an e-mail the provider marks unverified is refused. Pure: no Streamlit here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from db.errors import StoreError
from db.file_modes import write_atomically
from db.sso_repo import SsoSignIn, normal_identity
from hat_core.errors import ConfigError, Problem
from hat_core.settings import Settings

MIN_COOKIE_SECRET = 32
CALLBACK = "/oauth2callback"
CLAIM_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")


@dataclass(frozen=True)
class SsoConfig:
    """The OIDC client of the console, from the settings."""

    metadata_url: str
    client_id: str
    client_secret: str
    redirect_uri: str
    cookie_secret: str
    claim: str
    only: bool


def sso_config(settings: Settings) -> SsoConfig | None:
    """The SSO settings, or None when `HAT_SSO_METADATA_URL` is unset; a `ConfigError` that
    names every missing or bad `HAT_SSO_*` setting otherwise."""
    if not settings.sso_metadata_url:
        if settings.sso_only:
            raise ConfigError("HAT_SSO_ONLY is set but SSO is not configured",
                              [Problem("HAT_SSO_METADATA_URL", "not set")])
        return None
    secret = settings.sso_client_secret.get_secret_value() if settings.sso_client_secret else ""
    cookie = settings.sso_cookie_secret.get_secret_value() if settings.sso_cookie_secret else ""
    problems = []
    for name, value in (("HAT_SSO_METADATA_URL", settings.sso_metadata_url),
                        ("HAT_SSO_REDIRECT_URI", settings.sso_redirect_uri or "")):
        if not re.match(r"https?://[^/\s]+", value):
            problems.append(Problem(name, f"{value!r} is not an absolute http(s) URL"))
    if settings.sso_redirect_uri and not settings.sso_redirect_uri.endswith(CALLBACK):
        problems.append(Problem("HAT_SSO_REDIRECT_URI", f"must end with {CALLBACK} (the "
                                                        "console's callback path)"))
    if not settings.sso_client_id:
        problems.append(Problem("HAT_SSO_CLIENT_ID", "not set"))
    if not secret:
        problems.append(Problem("HAT_SSO_CLIENT_SECRET", "not set"))
    if len(cookie) < MIN_COOKIE_SECRET:
        problems.append(Problem("HAT_SSO_COOKIE_SECRET", f"{len(cookie)} characters; needs "
                                                         f"{MIN_COOKIE_SECRET} or more"))
    if not CLAIM_PATTERN.fullmatch(settings.sso_claim):
        problems.append(Problem("HAT_SSO_CLAIM", f"{settings.sso_claim!r} is not a claim name "
                                                 "(e.g. email, sub)"))
    if problems:
        raise ConfigError("the console's SSO settings are incomplete", problems)
    return SsoConfig(metadata_url=settings.sso_metadata_url,
                     client_id=settings.sso_client_id or "", client_secret=secret,
                     redirect_uri=settings.sso_redirect_uri or "", cookie_secret=cookie,
                     claim=settings.sso_claim, only=settings.sso_only)


def secrets_toml(config: SsoConfig) -> str:
    """The `[auth]` section `st.login` reads (strings escaped as TOML basic strings)."""
    values = {"redirect_uri": config.redirect_uri, "cookie_secret": config.cookie_secret,
              "client_id": config.client_id, "client_secret": config.client_secret,
              "server_metadata_url": config.metadata_url}
    lines = ["# written by `hat ui` from the HAT_SSO_* settings; do not edit", "[auth]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in values.items()]
    return "\n".join(lines) + "\n"


def write_secrets(config: SsoConfig, path: Path) -> Path:
    """Write `secrets_toml(config)` to `path` with mode 0600 (a temporary file in the same
    folder, then a rename, so no reader sees it half written or readable by others)."""
    write_atomically(path, secrets_toml(config))
    return path


def sign_in_of(claims: Mapping[str, Any], config: SsoConfig) -> SsoSignIn | str:
    """The sign-in an ID token's claims (`st.user`) describe, or why it cannot log in: no
    configured claim, an unverified e-mail, no issue time."""
    raw = claims.get(config.claim)
    if not isinstance(raw, str) or not raw.strip():
        return (f"The identity provider sent no {config.claim!r} claim, which names HAT Ops "
                "users here; ask an admin.")
    if config.claim == "email" and claims.get("email_verified") is False:
        return f"The identity provider has not verified {raw}: no access."
    issued = claims.get("iat")
    if not isinstance(issued, int | float):
        return "The identity provider's token has no issue time (iat): no access."
    try:
        identity = normal_identity(raw)
    except StoreError as exc:
        return str(exc)
    material = json.dumps([claims.get("iss"), claims.get("sub"), issued, claims.get("nonce")])
    key = hmac.new(config.cookie_secret.encode(), material.encode(), hashlib.sha256).hexdigest()
    return SsoSignIn(identity=identity, key=key,
                     issued_at=datetime.fromtimestamp(issued, tz=UTC))
