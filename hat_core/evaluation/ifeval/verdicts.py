"""IFEval scoring: prompts, responses, per-prompt verdicts and the four accuracies.

Inputs are IFEval-format JSONL (`key, prompt, instruction_id_list, kwargs`) and responses
(`{key or prompt, response}`, matched by key, else by exact prompt text). Scoring is the
official checker run offline (see `ifeval_checker.py`). A prompt without a response is scored
as failed and flagged `missing_response`; a response that matches no prompt is reported.

    prompts = load_prompts("input_data.jsonl")
    responses = load_responses("responses.jsonl")
    result = score(prompts, responses, load_splitter(nltk_data_dir))
    print(result.summary.prompt_strict)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from hat_core.errors import Problem
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.ifeval import checker as ifeval_checker
from hat_core.evaluation.ifeval.checker import SentenceSplitter
from hat_core.evaluation.jsonl import Row, read_jsonl


@dataclass(frozen=True)
class IfevalPrompt:
    """One IFEval prompt with its instructions and their kwargs (as given, nulls kept)."""

    key: int
    prompt: str
    instruction_id_list: tuple[str, ...]
    kwargs: tuple[dict, ...]


@dataclass(frozen=True)
class Unmatched:
    """A response row that matches no prompt."""

    where: str
    key: int | None
    prompt: str | None


@dataclass(frozen=True)
class Responses:
    """Responses by prompt key, and the rows that matched no prompt."""

    by_key: Mapping[int, str]
    unmatched: tuple[Unmatched, ...]


@dataclass(frozen=True)
class IfevalVerdict:
    """The checker's verdict on one prompt."""

    key: int
    instruction_id_list: tuple[str, ...]
    strict: bool
    loose: bool
    strict_instructions: tuple[bool, ...]
    loose_instructions: tuple[bool, ...]
    random_dependent: bool
    missing_response: bool

    def to_dict(self) -> dict:
        row = asdict(self)
        for name in ("instruction_id_list", "strict_instructions", "loose_instructions"):
            row[name] = list(row[name])
        return row


@dataclass(frozen=True)
class IfevalSummary:
    """Prompt-level (IFE-P is `prompt_strict`) and instruction-level accuracies."""

    prompts: int
    instructions: int
    prompt_strict: float
    prompt_loose: float
    instruction_strict: float
    instruction_loose: float
    strict_count: int
    loose_count: int
    missing_responses: int
    unmatched_responses: int
    random_dependent: int
    sentence_splitter: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class IfevalResult:
    verdicts: tuple[IfevalVerdict, ...]
    unmatched: tuple[Unmatched, ...]
    summary: IfevalSummary


def _prompt_problems(data: dict) -> list[str]:
    ids, kwargs = data.get("instruction_id_list"), data.get("kwargs")
    if not isinstance(data.get("key"), int) or not isinstance(data.get("prompt"), str):
        return ["needs an integer `key` and a string `prompt`"]
    if not isinstance(ids, list) or not isinstance(kwargs, list) or len(ids) != len(kwargs):
        return ["`instruction_id_list` and `kwargs` must be lists of the same length"]
    found = (ifeval_checker.instruction_problem(i, k, data["prompt"])
             for i, k in zip(ids, kwargs, strict=True))
    return [p for p in found if p]


def parse_prompt(row: Row) -> IfevalPrompt:
    """One validated prompt row; raises `EvalInputError` naming `file:line`."""
    problems = _prompt_problems(row.data)
    if problems:
        raise EvalInputError(f"{row.where}: bad IFEval prompt",
                             [Problem(row.where, p) for p in problems])
    d = row.data
    return IfevalPrompt(d["key"], d["prompt"], tuple(d["instruction_id_list"]),
                        tuple(dict(k) for k in d["kwargs"]))


def load_prompts(path: str | Path) -> list[IfevalPrompt]:
    """Every prompt of an IFEval-format JSONL file; all bad rows are reported at once."""
    prompts, problems, seen = [], [], set()
    for row in read_jsonl(path):
        key = row.data.get("key")
        if isinstance(key, int) and key in seen:
            problems.append(Problem(row.where, f"duplicate key {key}"))
        seen.add(key if isinstance(key, int) else None)
        try:
            prompts.append(parse_prompt(row))
        except EvalInputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise EvalInputError(f"{path}: {len(problems)} problem(s)", problems)
    return prompts


def load_response_rows(path: str | Path) -> list[Row]:
    """Response rows (`response` plus `key` or `prompt`); bad rows raise, all at once."""
    rows, problems = read_jsonl(path), []
    for row in rows:
        d = row.data
        if not isinstance(d.get("response"), str):
            problems.append(Problem(row.where, "needs a string `response`"))
        elif not isinstance(d.get("key"), int) and not isinstance(d.get("prompt"), str):
            problems.append(Problem(row.where, "needs an integer `key` or a string `prompt`"))
    if problems:
        raise EvalInputError(f"{path}: {len(problems)} bad response row(s)", problems)
    return rows


def match_responses(prompts: list[IfevalPrompt], rows: list[Row]) -> Responses:
    """Match response rows to prompts by key, else by exact prompt text."""
    keys = {p.key for p in prompts}
    by_text = {p.prompt: p.key for p in prompts}
    by_key, unmatched, problems = {}, [], []
    for row in rows:
        d = row.data
        key = d.get("key") if d.get("key") in keys else by_text.get(d.get("prompt"))
        if key is None:
            unmatched.append(Unmatched(row.where, d.get("key"), d.get("prompt")))
        elif key in by_key:
            problems.append(Problem(row.where, f"a second response for key {key}"))
        else:
            by_key[key] = d["response"]
    if problems:
        raise EvalInputError("duplicate responses", problems)
    return Responses(by_key, tuple(unmatched))


def load_responses(path: str | Path, prompts: list[IfevalPrompt]) -> Responses:
    """Read a responses file and match it to `prompts`."""
    return match_responses(prompts, load_response_rows(path))


def judge(prompt: IfevalPrompt, response: str | None) -> IfevalVerdict:
    """The verdict on one prompt; call inside `ifeval_checker.offline(...)`."""
    ids = prompt.instruction_id_list
    random_dep = any(ifeval_checker.is_random_dependent(i, k, prompt.prompt)
                     for i, k in zip(ids, prompt.kwargs, strict=True))
    if response is None:
        fails = (False,) * len(ids)
        return IfevalVerdict(prompt.key, ids, False, False, fails, fails, random_dep, True)
    check = ifeval_checker.check(prompt.key, prompt.prompt, list(ids),
                                 [dict(k) for k in prompt.kwargs], response)
    return IfevalVerdict(prompt.key, ids, all(check.strict), all(check.loose), check.strict,
                         check.loose, random_dep, False)


def _share(hits: int, total: int) -> float:
    return hits / total if total else 0.0


def summarise(verdicts: list[IfevalVerdict], unmatched: int, splitter: str) -> IfevalSummary:
    """Accuracies over all prompts (missing responses count as failures)."""
    strict = [x for v in verdicts for x in v.strict_instructions]
    loose = [x for v in verdicts for x in v.loose_instructions]
    n, s, lo = len(verdicts), sum(v.strict for v in verdicts), sum(v.loose for v in verdicts)
    return IfevalSummary(
        prompts=n, instructions=len(strict), prompt_strict=_share(s, n),
        prompt_loose=_share(lo, n), instruction_strict=_share(sum(strict), len(strict)),
        instruction_loose=_share(sum(loose), len(loose)), strict_count=s, loose_count=lo,
        missing_responses=sum(v.missing_response for v in verdicts),
        unmatched_responses=unmatched, random_dependent=sum(v.random_dependent for v in verdicts),
        sentence_splitter=splitter,
    )


def score(prompts: list[IfevalPrompt], responses: Responses,
          splitter: SentenceSplitter) -> IfevalResult:
    """Judge every prompt with the official checker, offline, and summarise."""
    with ifeval_checker.offline(splitter):
        verdicts = [judge(p, responses.by_key.get(p.key)) for p in prompts]
    summary = summarise(verdicts, len(responses.unmatched), splitter.source)
    return IfevalResult(tuple(verdicts), responses.unmatched, summary)
