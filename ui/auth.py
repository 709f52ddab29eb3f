"""Who may do what in the console: roles and the permission table.

Roles, weakest first: viewer < reviewer < operator < admin (`db.models.ROLES`). `can(role,
action)` reads the permission table `PERMISSIONS` (action -> the weakest role allowed).
Sessions live in the store (`db.sessions_repo`; `ui.session` keeps the token). Pure: no
Streamlit here, so every rule is tested directly.
"""

from __future__ import annotations

ROLES = ("viewer", "reviewer", "operator", "admin")

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
    "release.experiment": "operator",
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
