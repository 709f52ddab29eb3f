"""Who may do what in the console, and the signed session token that survives a reload.

Roles, weakest first: viewer < reviewer < operator < admin (`db.models.ROLES`). `can(role,
action)` reads the permission table `PERMISSIONS` (action -> the weakest role allowed).

Session token: `name.expiry.signature`, the signature an HMAC-SHA256 over `name.expiry` with
a secret from `HAT_CONSOLE_SECRET`, else the file `$HAT_HOME/console.secret` (created with
mode 0600 on first use). The console keeps it in the page URL (`?session=...`), so a browser
reload (which starts a new Streamlit session) logs the user back in until the token expires;
the role is re-read from the store each time. Logout removes it from the URL. Pure: no
Streamlit here, so every rule is tested directly.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from pathlib import Path

ROLES = ("viewer", "reviewer", "operator", "admin")
TOKEN_TTL_S = 12 * 3600

# action -> the weakest role allowed to do it
PERMISSIONS: dict[str, str] = {
    "harness.view": "viewer",
    "runs.view": "viewer",
    "bad_cases.view": "viewer",
    "release.view": "viewer",
    "audit.view": "reviewer",
    "harness.submit": "operator",
    "retrain.start": "operator",
    "bad_cases.label": "reviewer",
    "release.promote": "operator",
    "release.override": "admin",
    "release.rollback": "operator",
    "users.manage": "admin",
    "evidence.view": "viewer",
    "evidence.save": "operator",
    "pairwise.vote": "reviewer",
    "pairwise.manage": "operator",
}


class PermissionDenied(Exception):
    """A user tried an action their role does not allow."""


def can(role: str, action: str) -> bool:
    """Whether `role` may do `action`; unknown roles may do nothing."""
    if action not in PERMISSIONS:
        raise KeyError(f"unknown action {action!r}; valid: {', '.join(sorted(PERMISSIONS))}")
    if role not in ROLES:
        return False
    return ROLES.index(role) >= ROLES.index(PERMISSIONS[action])


def require(role: str, action: str) -> None:
    """Raise `PermissionDenied` unless `role` may do `action`."""
    if not can(role, action):
        raise PermissionDenied(
            f"the {role} role may not {action}; it needs {PERMISSIONS[action]} or above"
        )


def make_token(name: str, secret: bytes, *, now: float, ttl_s: int = TOKEN_TTL_S) -> str:
    """A signed session token for user `name`, valid `ttl_s` seconds from `now`."""
    body = f"{_b64(name.encode())}.{int(now) + ttl_s}"
    return f"{body}.{_sign(body, secret)}"


def read_token(token: str, secret: bytes, *, now: float) -> str | None:
    """The user name in `token` if its signature is valid and it has not expired."""
    parts = token.split(".")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    body = f"{parts[0]}.{parts[1]}"
    if not hmac.compare_digest(parts[2], _sign(body, secret)):
        return None
    if int(parts[1]) < now:
        return None
    try:
        return base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None


def load_secret(home: Path) -> bytes:
    """The signing secret: `HAT_CONSOLE_SECRET`, else `home/console.secret` (made once)."""
    if os.environ.get("HAT_CONSOLE_SECRET"):
        return os.environ["HAT_CONSOLE_SECRET"].encode()
    path = home / "console.secret"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another console process made it first
            return path.read_text().strip().encode()
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
    return path.read_text().strip().encode()


def _sign(body: str, secret: bytes) -> str:
    return _b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")
