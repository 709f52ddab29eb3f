"""Pairwise review items from two evaluation runs: both systems' episodes on the same scenarios.

    items = review_items_from_cases(rows_a, rows_b, suites=("t1", "t2"), limit=20,
                                    rng=random.Random(7), source_a="run 3f2c", source_b="run 9a1d")

`rows_a` and `rows_b` are per-case rows (`hat_core.evaluation.evaluate.case_rows`, a run's
`*.cases.jsonl`). Only simulator episodes can be shown (`ELIGIBLE_SUITES`); rows of other
suites are skipped. A case is in the review when both runs have it: the same suite and case
id (suite / group / surface / scenario, e.g. `t2/h001/s00003-price`), and the same viewer
turns; equal ids with different viewer turns mean the runs played different evaluation
worlds (another `--seed`), which is an error, as is sharing no case at all. Each item shows
the viewer's turns as the prompt and each side's transcript (tool calls, tool results, hook
feedback and replies) as text; its `scenario_id` is the case id.

`with_judge=True` also sets each item's judge verdict from the rule judge's verdicts
(`passed`, when both rows' `judge` is `rule`; rows without one predate LLM judges): the
system that alone passed (`a` or `b`), else `tie` (both passed or both failed). It is off
by default: the store keeps no record of which judge wrote an item's verdict, and the
`pairwise` calibration source (`db.calibration_repo`, the judge gate's `judge_source:
pairwise`) is meant for an LLM judge, so rule-judge verdicts there would be counted as the
LLM judge's. Turn it on only for reviews that calibrate the rule judge; a low agreement on
`tie` items then says reviewers see differences the rule judge does not. Pure: the caller
loads the rows and passes a seeded `rng` for the `limit` sample.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from hat_core.errors import ConfigError, Problem
from hat_core.evidence.review_items import ReviewItem

ELIGIBLE_SUITES = ("t1", "t2", "tool_robustness", "prompt_robustness")
DEFAULT_SUITES = ("t1", "t2")
RESULT_CHARS = 240  # a tool result longer than this is cut in the rendered response
SHOWN_PROBLEMS = 10
_OLD_ROW = "(rows written before transcripts were kept: evaluate the checkpoint again)"


@dataclass(frozen=True)
class RunCase:
    """One usable case row: its id, the viewer's turns, the transcript, the rule judge's
    verdict (None when another judge gave it)."""

    case_id: str
    viewer: tuple[str, ...]
    transcript: tuple[dict, ...]
    passed: bool | None


def review_items_from_cases(
    rows_a: Sequence[dict], rows_b: Sequence[dict], *, suites: Sequence[str] = DEFAULT_SUITES,
    limit: int | None = None, rng: random.Random | None = None, with_judge: bool = False,
    source_a: str = "A", source_b: str = "B",
) -> list[ReviewItem]:
    """The cases both runs played, in A's order (a seeded sample of `limit` of them)."""
    _check_options(suites, limit)
    a = usable_cases(rows_a, suites, source_a)
    b = usable_cases(rows_b, suites, source_b)
    common = [k for k in a if k in b]
    _check_common(a, b, common, source_a, source_b)
    if limit is not None and limit < len(common):
        picked = sorted((rng or random.Random(0)).sample(range(len(common)), limit))
        common = [common[i] for i in picked]
    return [ReviewItem(k, render_prompt(a[k].viewer), render_response(a[k].transcript),
                       render_response(b[k].transcript),
                       judge_verdict(a[k].passed, b[k].passed) if with_judge else None)
            for k in common]


def usable_cases(rows: Sequence[dict], suites: Sequence[str], source: str) -> dict[str, RunCase]:
    """The rows of `suites` by case id; `ConfigError` lists every unusable row (`source:N`,
    N counting rows from 1, the line of the cases JSONL)."""
    found: dict[str, RunCase] = {}
    problems: list[Problem] = []
    seen_suites: set[str] = set()
    for n, row in enumerate(rows, start=1):
        where = f"{source}:{n}"
        suite = row.get("suite") if isinstance(row, dict) else None
        if not isinstance(suite, str):
            problems.append(Problem(where, "not a case row (no suite)"))
            continue
        seen_suites.add(suite)
        if suite not in suites:
            continue
        case = _case(row, where, problems)
        if case is not None and case.case_id in found:
            problems.append(Problem(where, f"case {case.case_id!r} repeats"))
        elif case is not None:
            found[case.case_id] = case
    if problems:
        raise ConfigError(f"{source}: {len(problems)} unusable case row(s)", problems)
    if not found:
        raise ConfigError(f"{source}: no {'/'.join(suites)} cases to show", [Problem(
            source, f"its suites: {', '.join(sorted(seen_suites)) or 'none'}; a review shows "
                    f"simulator episodes of {', '.join(ELIGIBLE_SUITES)}")])
    return found


def render_prompt(viewer: Sequence[str]) -> str:
    """The viewer's turns, one a line (numbered when there are several)."""
    if len(viewer) == 1:
        return f"viewer: {viewer[0]}"
    return "\n".join(f"viewer (turn {n}): {text}" for n, text in enumerate(viewer, start=1))


def render_response(transcript: Sequence[dict]) -> str:
    """What the assistant did, readable: per viewer turn its tool calls, their results, hook
    feedback and its replies."""
    turns = sum(m.get("role") == "user" for m in transcript)
    lines, turn = [], 0
    for m in transcript:
        if m.get("role") == "user":
            turn += 1
            if turns > 1:
                lines.append(f"[turn {turn}]")
            continue
        lines += _message_lines(m)
    return "\n".join(lines) or "(no reply)"


def judge_verdict(passed_a: bool | None, passed_b: bool | None) -> str | None:
    """The rule judge as a pairwise verdict: the side that alone passed, else `tie`."""
    if passed_a is None or passed_b is None:
        return None
    if passed_a == passed_b:
        return "tie"
    return "a" if passed_a else "b"


def _message_lines(m: dict) -> list[str]:
    role, content = m.get("role"), m.get("content") or ""
    if role == "tool":
        text = str(content)
        return [f"tool result: {text[:RESULT_CHARS]}" + ("…" if len(text) > RESULT_CHARS else "")]
    if role == "system":
        return [f"hook: {content}"]
    calls = [c.get("function", {}) for c in m.get("tool_calls") or ()]
    out = [f"tool call: {c.get('name', '?')}({_args(c.get('arguments'))})" for c in calls]
    return out + ([f"reply: {content}"] if content else [])


def _args(arguments) -> str:
    if not isinstance(arguments, str):
        return json.dumps(arguments, ensure_ascii=False)
    return arguments


def _case(row: dict, where: str, problems: list[Problem]) -> RunCase | None:
    found = []
    case_id, viewer, transcript = row.get("case_id"), row.get("viewer"), row.get("transcript")
    if not isinstance(case_id, str) or not case_id.strip():
        found.append(Problem(where, "case_id: missing or not a non-empty string"))
    if (not isinstance(viewer, list) or not viewer
            or not all(isinstance(v, str) for v in viewer)):
        found.append(Problem(where, f"viewer: missing or not a list of texts {_OLD_ROW}"))
    if not isinstance(transcript, list) or not all(isinstance(m, dict) for m in transcript):
        found.append(Problem(where, f"transcript: missing or not a list of messages {_OLD_ROW}"))
    passed = row.get("passed")
    if passed is not None and not isinstance(passed, bool):
        found.append(Problem(where, f"passed: {passed!r} is not true or false"))
    problems += found
    if found:
        return None
    by_rule = row.get("judge", "rule") == "rule"  # an LLM judge's verdict is no rule verdict
    return RunCase(case_id.strip(), tuple(viewer), tuple(transcript),
                   passed if by_rule else None)


def _check_options(suites: Sequence[str], limit: int | None) -> None:
    problems = [Problem("suites", f"{s!r} is not one of {', '.join(ELIGIBLE_SUITES)}")
                for s in suites if s not in ELIGIBLE_SUITES]
    if not suites:
        problems.append(Problem("suites", f"none given; valid: {', '.join(ELIGIBLE_SUITES)}"))
    if limit is not None and limit < 1:
        problems.append(Problem("limit", f"{limit} is not a positive number of items"))
    if problems:
        raise ConfigError("bad options for a review from two runs", problems)


def _check_common(a: dict[str, RunCase], b: dict[str, RunCase], common: list[str],
                  source_a: str, source_b: str) -> None:
    if not common:
        raise ConfigError(f"{source_a} and {source_b} share no scenario", [
            Problem(source_a, f"{len(a)} cases, e.g. {', '.join(list(a)[:3])}"),
            Problem(source_b, f"{len(b)} cases, e.g. {', '.join(list(b)[:3])}")])
    differ = [k for k in common if a[k].viewer != b[k].viewer]
    if differ:
        raise ConfigError(
            f"{source_a} and {source_b} played different scenarios under the same case ids "
            f"({len(differ)} of {len(common)}): evaluated with different seeds?",
            [Problem(k, f"A: {a[k].viewer[0]!r}; B: {b[k].viewer[0]!r}")
             for k in differ[:SHOWN_PROBLEMS]])
