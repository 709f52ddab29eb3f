"""The items of a blind pairwise review, read from JSONL: one scenario and two responses each.

One JSON object per line: `scenario_id`, `response_a`, `response_b` (text), optionally
`prompt` (what the model was asked, with its context) and `judge` (a judge's verdict: `a`,
`b` or `tie`, used for judge calibration once the review is closed). Every problem of the
file is reported at once, with its line. Pure: the console and the CLI pass the text in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hat_core.errors import ConfigError, Problem

JUDGE_VERDICTS = ("a", "b", "tie")
_TEXT = ("scenario_id", "response_a", "response_b")


@dataclass(frozen=True)
class ReviewItem:
    """One scenario: the prompt, system A's and system B's responses, the judge's verdict."""

    scenario_id: str
    prompt: str
    response_a: str
    response_b: str
    judge: str | None = None


def parse_review_items(text: str, source: str = "items.jsonl") -> list[ReviewItem]:
    """Every non-blank line of `text` as a `ReviewItem`; `ConfigError` lists every problem."""
    items, problems, seen = [], [], {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        item = _item(line, where, problems)
        if item is None:
            continue
        if item.scenario_id in seen:
            problems.append(Problem(where, f"scenario_id {item.scenario_id!r} repeats line "
                                           f"{seen[item.scenario_id]}"))
            continue
        seen[item.scenario_id] = number
        items.append(item)
    if not items and not problems:
        problems.append(Problem(source, "no items (one JSON object per line)"))
    if problems:
        raise ConfigError(f"{source}: {len(problems)} problem(s) in the review items", problems)
    return items


def _item(line: str, where: str, problems: list[Problem]) -> ReviewItem | None:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        problems.append(Problem(where, f"not JSON ({exc.msg})"))
        return None
    if not isinstance(data, dict):
        problems.append(Problem(where, "a row must be a JSON object"))
        return None
    found = [Problem(where, f"{k}: missing or not a non-empty string") for k in _TEXT
             if not isinstance(data.get(k), str) or not data[k].strip()]
    if not isinstance(data.get("prompt", ""), str):
        found.append(Problem(where, "prompt: not a string"))
    judge = data.get("judge")
    if judge is not None and judge not in JUDGE_VERDICTS:
        found.append(Problem(where, f"judge: {judge!r} is not one of {', '.join(JUDGE_VERDICTS)}"))
    problems += found
    if found:
        return None
    return ReviewItem(data["scenario_id"].strip(), data.get("prompt", ""), data["response_a"],
                      data["response_b"], judge)
