"""The console's pages, their sections and the action a role needs to see each one.

`pages_for(role)` is what `ui/app.py` hands to `st.navigation`; a page not listed for a role
is not reachable by that role (each page also checks its own action).
"""

from __future__ import annotations

from dataclasses import dataclass

from ui.auth import can


@dataclass(frozen=True)
class PageSpec:
    """One page file under `ui/pages/`, where it sits in the menu, who may open it."""

    file: str
    title: str
    icon: str
    section: str
    action: str


PAGES = (
    PageSpec("harness_versions.py", "Versions", ":material/history:", "Harness", "harness.view"),
    PageSpec("harness_submit.py", "Edit and submit", ":material/edit:", "Harness",
             "harness.submit"),
    PageSpec("harness_diff.py", "Diff", ":material/difference:", "Harness", "harness.view"),
    PageSpec("runs.py", "Retrain jobs", ":material/play_circle:", "Runs", "runs.view"),
    PageSpec("job.py", "Job", ":material/query_stats:", "Runs", "runs.view"),
    PageSpec("compare.py", "Compare checkpoints", ":material/compare:", "Runs", "runs.view"),
    PageSpec("bad_cases.py", "Bad cases", ":material/bug_report:", "Review", "bad_cases.view"),
    PageSpec("ab_tests.py", "A/B tests", ":material/science:", "Evidence", "evidence.view"),
    PageSpec("pairwise.py", "Pairwise review", ":material/thumbs_up_down:", "Evidence",
             "evidence.view"),
    PageSpec("judge.py", "Judge calibration", ":material/balance:", "Evidence",
             "evidence.view"),
    PageSpec("release.py", "Release", ":material/rocket_launch:", "Release", "release.view"),
    PageSpec("audit.py", "Audit log", ":material/receipt_long:", "Release", "audit.view"),
    PageSpec("users.py", "Users", ":material/group:", "Admin", "users.manage"),
)


def pages_for(role: str) -> dict[str, list[PageSpec]]:
    """The pages `role` may open, grouped by menu section (in menu order)."""
    out: dict[str, list[PageSpec]] = {}
    for page in PAGES:
        if can(role, page.action):
            out.setdefault(page.section, []).append(page)
    return out
