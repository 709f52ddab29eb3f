"""`tool_calls`: tool-call accuracy on a user-provided BFCL-format file, scored by our matcher.

    r = ToolCallsSuite().run(backend, None, questions="q.jsonl", answers="a.jsonl")
    r.metrics["accuracy"]

Each question (`{"id", "question": [[messages]], "function": [docs]}`) is sent as one chat
request: its messages (all turns, flattened) with the function docs as OpenAI tools (BFCL's
type names mapped to JSON Schema: `dict` -> object, `float` -> number, `tuple` -> array; dots
in function names become underscores, which the matcher accepts). The model's tool calls are
the candidate and `tool_calls.judge_case` gives the verdict (function name, required
arguments, allowed values, types; `docs/evaluation.md`). Malformed calls count as calls
whose arguments do not parse. Needs a language model: the oracle only plays the simulator.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hat_core.errors import ConfigError
from hat_core.evaluation.bfcl import calls as tool_calls
from hat_core.evaluation.cases import Progress
from hat_core.evaluation.policy import backend_of
from hat_core.evaluation.suites.base import SuiteResult
from hat_core.harness.model import Harness
from hat_core.inference.batching import ChatRequest, answer_each
from hat_core.inference.protocol import InferenceBackend
from hat_core.sim.policy import Policy

TYPE_NAMES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


def json_schema(schema: object) -> object:
    """A BFCL parameter schema with JSON-Schema type names (recursively)."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str) and value in TYPE_NAMES:
            if TYPE_NAMES[value] is not None:
                out[key] = TYPE_NAMES[value]
        else:
            out[key] = json_schema(value)
    return out


def openai_tools(case: tool_calls.Case) -> list[dict]:
    return [{"type": "function",
             "function": {"name": f.name.replace(".", "_"), "description": f.description,
                          "parameters": json_schema(f.parameters) or {"type": "object"}}}
            for f in case.functions]


def question_messages(question: object) -> list[dict]:
    """BFCL's `[[turn messages], ...]` (or a flat list, or a string) as one message list."""
    if isinstance(question, str):
        return [{"role": "user", "content": question}]
    out: list[dict] = []
    for item in question if isinstance(question, list) else [question]:
        out += question_messages(item) if isinstance(item, list) else [item]
    return out


def candidate_of(case_id: str, out) -> tool_calls.Candidate:
    calls = [tool_calls.Call(c.name, _parse(c.arguments)) for c in out.tool_calls]
    calls += [tool_calls.Call("", None) for _ in out.invalid_tool_calls]
    return tool_calls.Candidate(case_id, tuple(calls))


def _parse(arguments: str) -> dict | None:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class ToolCallsSuite:
    """BFCL-format questions answered by the model, matched against possible answers."""

    name: str = "tool_calls"

    def run(self, model: Policy | InferenceBackend, harness: Harness | None = None, *,
            questions: str | Path | None = None, answers: str | Path | None = None,
            limit: int | None = None, max_tokens: int = 512,
            progress: Progress | None = None) -> SuiteResult:
        backend = backend_of(model)
        if backend is None:
            raise ConfigError("suite tool_calls needs a language model (a model directory or "
                              "an endpoint), not a scripted policy")
        if questions is None or answers is None:
            raise ConfigError("suite tool_calls needs --bfcl-questions FILE and "
                              "--bfcl-answers FILE")
        cases = tool_calls.load_cases(questions, answers)[:limit]
        def answered(done: int) -> None:
            if progress is not None:
                progress(self.name, done, len(cases))

        outputs = answer_each(backend, [ChatRequest(question_messages(case.question),
                                                    openai_tools(case), max_tokens)
                                        for case in cases], on_answer=answered)
        candidates = [candidate_of(case.id, out)
                      for case, out in zip(cases, outputs, strict=True)]
        rows = [{"calls": [{"name": c.name, "arguments": c.arguments} for c in out.tool_calls],
                 "invalid_calls": list(out.invalid_tool_calls)} for out in outputs]
        result = tool_calls.score(cases, candidates)
        s = result.summary
        return SuiteResult(self.name, {"accuracy": s.accuracy}, s.to_dict(),
                           tuple({"case_id": f"{self.name}/{v.id}", **v.to_dict(), **row}
                                 for v, row in zip(result.verdicts, rows, strict=True)))
