"""BFCL-format tool-call matching: question and answer rows, candidate calls, verdicts.

Questions: `{"id", "question", "function": [{"name", "description", "parameters"}]}`.
Possible answers: `{"id", "ground_truth": [{func_name: {arg: [allowed values...]}}]}`, where ""
among the allowed values means the argument may be left out. Candidates:
`{"id", "calls": [{"name", "arguments"}]}` with arguments an object or a JSON string.

A case is valid when the candidate makes exactly as many calls as the ground truth and the calls
can be paired one to one (in any order) so that every pair matches: same function (`a.b.c`
also matches `a_b_c`, as OpenAI-style names cannot hold dots), every schema-required argument
present, no argument outside the schema or the ground truth, and every value accepted by
`tool_values.check_argument`. The first error found names the case's `error_type`:
`missing_candidate, unparseable_arguments, wrong_count, wrong_function, missing_required,
unexpected_argument, wrong_type, wrong_value`.

    cases = load_cases("questions.jsonl", "answers.jsonl")
    result = score(cases, load_candidates("candidates.jsonl"))
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from hat_core.errors import Problem
from hat_core.evaluation.bfcl.values import OPTIONAL, Mismatch, check_argument
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.jsonl import Row, read_jsonl

ERROR_TYPES = ("missing_candidate", "unparseable_arguments", "wrong_count", "wrong_function",
               "missing_required", "unexpected_argument", "wrong_type", "wrong_value")


@dataclass(frozen=True)
class FunctionDoc:
    name: str
    description: str
    parameters: dict


@dataclass(frozen=True)
class ExpectedCall:
    """One ground-truth call: the function and each argument's allowed values."""

    name: str
    allowed: dict[str, list]


@dataclass(frozen=True)
class Case:
    id: str
    question: object
    functions: tuple[FunctionDoc, ...]
    expected: tuple[ExpectedCall, ...]


@dataclass(frozen=True)
class Call:
    """A candidate call; `arguments` is None when its JSON string did not parse."""

    name: str
    arguments: dict | None


@dataclass(frozen=True)
class Candidate:
    id: str
    calls: tuple[Call, ...]


@dataclass(frozen=True)
class ToolCallVerdict:
    id: str
    valid: bool
    error_type: str | None
    error: str | None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ToolCallSummary:
    cases: int
    valid: int
    accuracy: float
    errors: dict[str, int]
    unmatched_candidates: tuple[str, ...]

    def to_dict(self) -> dict:
        return {**asdict(self), "unmatched_candidates": list(self.unmatched_candidates)}


@dataclass(frozen=True)
class ToolCallResult:
    verdicts: tuple[ToolCallVerdict, ...]
    summary: ToolCallSummary


def same_name(expected: str, given: str) -> bool:
    """Names match exactly, or with dots written as underscores (`a.b` ~ `a_b`)."""
    return expected == given or expected.replace(".", "_") == given.replace(".", "_")


# --- loading --------------------------------------------------------------------------------

def _bad(row: Row, message: str) -> EvalInputError:
    return EvalInputError(f"{row.where}: {message}", [Problem(row.where, message)])


def _function(row: Row, doc: object) -> FunctionDoc:
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        raise _bad(row, "each `function` entry needs a `name`")
    params = doc.get("parameters") or {}
    if not isinstance(params, dict):
        raise _bad(row, f"parameters of {doc['name']} must be an object")
    return FunctionDoc(doc["name"], str(doc.get("description", "")), params)


def parse_question(row: Row) -> tuple[str, object, tuple[FunctionDoc, ...]]:
    d = row.data
    functions = d.get("function")
    if not isinstance(d.get("id"), str) or not isinstance(functions, list):
        raise _bad(row, "a question needs a string `id` and a `function` list")
    return d["id"], d.get("question"), tuple(_function(row, f) for f in functions)


def _expected_call(row: Row, item: object) -> ExpectedCall:
    if not isinstance(item, dict) or len(item) != 1:
        raise _bad(row, "each ground-truth entry must be {func_name: {arg: [values]}}")
    (name, args), = item.items()
    if not isinstance(args, dict) or not all(isinstance(v, list) for v in args.values()):
        raise _bad(row, f"allowed values of {name} must be lists")
    return ExpectedCall(name, dict(args))


def parse_answer(row: Row) -> tuple[str, tuple[ExpectedCall, ...]]:
    d = row.data
    truth = d.get("ground_truth")
    if not isinstance(d.get("id"), str) or not isinstance(truth, list):
        raise _bad(row, "an answer needs a string `id` and a `ground_truth` list")
    return d["id"], tuple(_expected_call(row, item) for item in truth)


def _collect(rows: list[Row], parse) -> dict:
    out, problems = {}, []
    for row in rows:
        try:
            key, *value = parse(row)
        except EvalInputError as exc:
            problems.extend(exc.problems)
            continue
        if key in out:
            problems.append(Problem(row.where, f"duplicate id {key!r}"))
        out[key] = value
    if problems:
        raise EvalInputError(f"{len(problems)} bad row(s)", problems)
    return out


def load_cases(questions: str | Path, answers: str | Path) -> list[Case]:
    """Join question and possible-answer rows by id; ids present in one file only raise."""
    qs = _collect(read_jsonl(questions), parse_question)
    ans = _collect(read_jsonl(answers), parse_answer)
    lonely = [Problem(str(questions), f"no answer for id {i!r}") for i in qs if i not in ans]
    lonely += [Problem(str(answers), f"no question for id {i!r}") for i in ans if i not in qs]
    if lonely:
        raise EvalInputError("questions and answers do not pair up", lonely)
    return [Case(i, q, fns, ans[i][0]) for i, (q, fns) in qs.items()]


def parse_call(row: Row, item: object) -> Call:
    """One candidate call; a non-JSON arguments string gives `arguments=None`."""
    if isinstance(item, dict) and isinstance(item.get("function"), dict):
        item = item["function"]  # OpenAI `tool_calls` entries wrap the call
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise _bad(row, "each call needs a `name`")
    args = item.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            args = None
    return Call(item["name"], args if isinstance(args, dict) else None)


def parse_candidate(row: Row) -> tuple[str, tuple[Call, ...]]:
    d = row.data
    if not isinstance(d.get("id"), str) or not isinstance(d.get("calls"), list):
        raise _bad(row, "a candidate needs a string `id` and a `calls` list")
    return d["id"], tuple(parse_call(row, c) for c in d["calls"])


def load_candidates(path: str | Path) -> list[Candidate]:
    return [Candidate(i, v[0]) for i, v in _collect(read_jsonl(path), parse_candidate).items()]


# --- matching -------------------------------------------------------------------------------

def _doc(case: Case, name: str) -> FunctionDoc | None:
    return next((f for f in case.functions if f.name == name), None)


def _argument_mismatch(expected: ExpectedCall, doc: FunctionDoc, args: dict) -> Mismatch | None:
    props = doc.parameters.get("properties") or {}
    for name in doc.parameters.get("required") or ():
        if name not in args:
            return Mismatch("missing_required", f"{doc.name}: missing required argument {name}")
    for name, value in args.items():
        if name not in props or name not in expected.allowed:
            return Mismatch("unexpected_argument", f"{doc.name}: unexpected argument {name}")
        mismatch = check_argument(name, value, props[name], expected.allowed[name])
        if mismatch:
            return mismatch
    for name, allowed in expected.allowed.items():
        if name not in args and OPTIONAL not in allowed:
            return Mismatch("missing_required", f"{doc.name}: missing argument {name} "
                                                "(the ground truth does not allow leaving it out)")
    return None


def call_mismatch(case: Case, expected: ExpectedCall, call: Call) -> Mismatch | None:
    """None if `call` matches `expected` (see the module rules); else the first error."""
    if not same_name(expected.name, call.name):
        return Mismatch("wrong_function", f"expected {expected.name}, got {call.name}")
    doc = _doc(case, expected.name) or FunctionDoc(expected.name, "", {})
    return _argument_mismatch(expected, doc, call.arguments or {})


def _augment(i: int, ok: list[list[bool]], owner: list[int | None], seen: set[int]) -> bool:
    for j, fits in enumerate(ok[i]):
        if fits and j not in seen:
            seen.add(j)
            if owner[j] is None or _augment(owner[j], ok, owner, seen):
                owner[j] = i
                return True
    return False


def _first_unpaired(ok: list[list[bool]]) -> int | None:
    """The first expected call left out of a maximum one-to-one pairing, or None."""
    owner: list[int | None] = [None] * (len(ok[0]) if ok else 0)
    for i in range(len(ok)):
        if not _augment(i, ok, owner, set()):
            return i
    return None


def _explain(case: Case, expected: ExpectedCall, calls: tuple[Call, ...]) -> Mismatch:
    """The most telling error for an expected call no candidate call matched."""
    found = [call_mismatch(case, expected, c) for c in calls]
    named = [m for m in found if m and m.error_type != "wrong_function"]
    if named:
        return named[0]
    return next((m for m in found if m), None) or Mismatch(
        "wrong_count", f"{expected.name}: its only matching call is paired with another")


def judge_case(case: Case, candidate: Candidate | None) -> ToolCallVerdict:
    """The verdict on one case."""
    if candidate is None:
        return ToolCallVerdict(case.id, False, "missing_candidate", "no candidate row")
    calls = candidate.calls
    bad = next((c for c in calls if c.arguments is None), None)
    if bad:
        return ToolCallVerdict(case.id, False, "unparseable_arguments",
                               f"arguments of {bad.name} are not a JSON object")
    if len(calls) != len(case.expected):
        return ToolCallVerdict(case.id, False, "wrong_count",
                               f"expected {len(case.expected)} call(s), got {len(calls)}")
    ok = [[call_mismatch(case, e, c) is None for c in calls] for e in case.expected]
    missing = _first_unpaired(ok)
    if missing is None:
        return ToolCallVerdict(case.id, True, None, None)
    why = _explain(case, case.expected[missing], calls)
    return ToolCallVerdict(case.id, False, why.error_type, why.message)


def score(cases: list[Case], candidates: list[Candidate]) -> ToolCallResult:
    """Judge every case; candidates for unknown ids are listed in the summary."""
    by_id = {c.id: c for c in candidates}
    verdicts = tuple(judge_case(case, by_id.get(case.id)) for case in cases)
    known = {case.id for case in cases}
    valid = sum(v.valid for v in verdicts)
    errors = Counter(v.error_type for v in verdicts if v.error_type)
    summary = ToolCallSummary(
        cases=len(verdicts), valid=valid, accuracy=valid / len(verdicts) if verdicts else 0.0,
        errors=dict(sorted(errors.items())),
        unmatched_candidates=tuple(c.id for c in candidates if c.id not in known),
    )
    return ToolCallResult(verdicts, summary)
