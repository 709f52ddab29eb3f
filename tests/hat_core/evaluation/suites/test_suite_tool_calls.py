"""`tool_calls`: a model's calls on a BFCL-format file, scored by the project's matcher."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_fakes import ScriptedBackend

from hat_core.errors import ConfigError
from hat_core.evaluation.bfcl import calls as tool_calls
from hat_core.evaluation.evaluate import EvalOptions, evaluate
from hat_core.evaluation.policy import BackendPolicy
from hat_core.evaluation.suites.tool_calls import (
    ToolCallsSuite,
    json_schema,
    question_messages,
)
from hat_core.inference.protocol import AssistantOutput, ToolCall
from hat_core.sim.policy import OraclePolicy

BFCL = Path(__file__).resolve().parents[4] / "examples" / "bfcl"
QUESTIONS, ANSWERS = BFCL / "questions.jsonl", BFCL / "possible_answers.jsonl"


def outputs_from(candidates: Path) -> list[AssistantOutput]:
    """What a model would have said to produce each candidate row."""
    out = []
    for line in candidates.read_text(encoding="utf-8").splitlines():
        calls = json.loads(line)["calls"]
        out.append(AssistantOutput("", "", tuple(
            ToolCall(c["name"], c["arguments"] if isinstance(c["arguments"], str)
                     else json.dumps(c["arguments"])) for c in calls)))
    return out


@pytest.mark.parametrize("name", ["candidates_right.jsonl", "candidates_wrong.jsonl"])
def test_the_suite_agrees_with_the_matcher(name):
    backend = ScriptedBackend(outputs_from(BFCL / name))
    result = ToolCallsSuite().run(backend, None, questions=QUESTIONS, answers=ANSWERS)
    expected = tool_calls.score(tool_calls.load_cases(QUESTIONS, ANSWERS),
                                tool_calls.load_candidates(BFCL / name))
    assert result.metrics["accuracy"] == expected.summary.accuracy
    assert [r["error_type"] for r in result.rows] == [v.error_type for v in expected.verdicts]
    assert result.metrics["accuracy"] == (1.0 if "right" in name else 0.0)


def test_requests_carry_the_question_and_openai_tools():
    backend = ScriptedBackend([])
    ToolCallsSuite().run(BackendPolicy(backend), None, questions=QUESTIONS, answers=ANSWERS,
                         limit=2, max_tokens=40)
    first = backend.requests[0]
    assert first["messages"] == [{"role": "user", "content": "What's the weather in Hangzhou?"}]
    assert first["tools"][0]["type"] == "function" and first["max_tokens"] == 40
    assert first["tools"][0]["function"]["parameters"]["type"] == "object"
    assert "." not in backend.requests[1]["tools"][0]["function"]["name"]


def test_invalid_calls_are_unparseable():
    backend = ScriptedBackend([AssistantOutput("", "", (), ("{broken",))])
    result = ToolCallsSuite().run(backend, None, questions=QUESTIONS, answers=ANSWERS, limit=1)
    assert result.rows[0]["error_type"] in ("unparseable_arguments", "wrong_function")
    assert result.metrics["accuracy"] == 0.0


def test_schema_and_question_conversion():
    schema = {"type": "dict", "properties": {"x": {"type": "float"},
                                             "t": {"type": "tuple", "items": {"type": "any"}}}}
    assert json_schema(schema) == {"type": "object", "properties": {
        "x": {"type": "number"}, "t": {"type": "array", "items": {}}}}
    turns = [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]]
    assert [m["content"] for m in question_messages(turns)] == ["a", "b"]
    assert question_messages("hi") == [{"role": "user", "content": "hi"}]


def test_the_oracle_cannot_answer_bfcl_and_files_are_required():
    with pytest.raises(ConfigError, match="needs a language model"):
        ToolCallsSuite().run(OraclePolicy(), None, questions=QUESTIONS, answers=ANSWERS)
    with pytest.raises(ConfigError, match="--bfcl-questions"):
        evaluate(ScriptedBackend([]), None, ["tool_calls"], EvalOptions())
