"""Harness data for the console pages: the version table, validation, submission, diffs.

Functions of a session or of text, no Streamlit: the pages call one of them per action.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from sqlalchemy.orm import Session

from db.console_queries import latest_jobs, slot_harness_version_id
from db.harness_repo import list_versions, submit_harness
from db.values import HarnessVersion
from hat_core.config_file import decode_text
from hat_core.diff.api import HarnessDiff, diff_harness
from hat_core.errors import HarnessError, Problem
from hat_core.harness.io import dump_harness, parse_harness
from hat_core.harness.model import Harness
from hat_core.harness.render import render
from hat_core.release.rules import SLOT

LIVE_SLOT = SLOT


@dataclass(frozen=True)
class Validation:
    """A parsed harness, or every problem found (each with its path)."""

    harness: Harness | None
    problems: tuple[Problem, ...]
    message: str = ""


def version_rows(
    session: Session, *, line: str | None = None, before_id: int | None = None, limit: int = 50
) -> tuple[list[dict], list[HarnessVersion]]:
    """One page of versions as table rows (live marker, newest job state) and the values."""
    versions = list_versions(session, line=line, before_id=before_id, limit=limit)
    jobs = latest_jobs(session, version_ids=[v.id for v in versions])
    live = slot_harness_version_id(session, slot=LIVE_SLOT)
    rows = []
    for v in versions:
        job = jobs.get(v.id)
        rows.append({
            "version": v.number, "line": v.line, "live": "● live" if v.id == live else "",
            "author": v.author, "note": v.note, "created": f"{v.created_at:%Y-%m-%d %H:%M}",
            "hash": v.content_hash[:12],
            "retrain": f"{job.state} ({job.trigger}, job {job.id})" if job else "no job",
        })
    return rows, versions


def validate_upload(name: str, raw: bytes) -> Validation:
    """Validate an uploaded harness file: bytes that are not UTF-8 text (or too many) are
    refused with the byte and line, as `hat harness validate` refuses them; nothing is
    replaced or stored."""
    try:
        text = decode_text(raw, name, error=HarnessError)
    except HarnessError as exc:
        return Validation(None, (Problem("", str(exc)),), str(exc))
    return validate_text(text)


def validate_text(text: str) -> Validation:
    """Parse and validate a harness document (YAML or JSON); nothing is stored."""
    try:
        return Validation(parse_harness(text, source="editor"), ())
    except HarnessError as exc:
        problems = tuple(exc.problems) or (Problem("", str(exc)),)
        return Validation(None, problems, str(exc))


def submit_valid(session: Session, *, harness: Harness, author: str, note: str) -> HarnessVersion:
    """Store a validated harness (a new version, or the identical stored one)."""
    return submit_harness(session, harness=harness, author=author, note=note)


def as_yaml(version: HarnessVersion) -> str:
    """A stored version as the YAML an operator edits."""
    return dump_harness(version.harness(), "yaml")


def rendered_text(harness: Harness) -> tuple[str, list[dict]]:
    """What the model sees: the system prompt and the tool list."""
    view = render(harness)
    return view.system_prompt, view.tools


def semantic_diff(before: HarnessVersion, after: HarnessVersion) -> HarnessDiff:
    """The classified changes from `before` to `after`."""
    return diff_harness(before.harness(), after.harness())


def change_rows(diff: HarnessDiff) -> list[dict]:
    """The change list as table rows, semantic changes first."""
    ordered = list(diff.semantic) + list(diff.surface)
    return [{"class": c.classification, "element": c.element, "kind": c.kind,
             "summary": c.summary, "path": c.path} for c in ordered]


def side_by_side(before: str, after: str, *, left: str, right: str) -> str:
    """An HTML table of two texts side by side, changed lines highlighted (context only)."""
    table = difflib.HtmlDiff(wrapcolumn=70).make_table(
        before.splitlines(), after.splitlines(), left, right, context=True, numlines=3)
    return DIFF_CSS + table


DIFF_CSS = """<style>
table.diff {font-family: monospace; font-size: 12px; border-collapse: collapse; width: 100%}
table.diff td {padding: 0 4px; vertical-align: top; white-space: pre-wrap}
.diff_header {background: #f0f0f0; color: #888}
.diff_add {background: #d7f5dd} .diff_chg {background: #fff3bf} .diff_sub {background: #ffd9d9}
td.diff_next {display: none}
</style>
"""
