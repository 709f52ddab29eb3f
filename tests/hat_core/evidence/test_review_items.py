"""Pairwise review items from JSONL: the fields, optional prompt and judge, every problem."""

from __future__ import annotations

import json

import pytest

from hat_core.errors import ConfigError
from hat_core.evidence.review_items import ReviewItem, parse_review_items


def jsonl(*rows) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)
                     for r in rows)


def test_rows_with_and_without_the_optional_fields():
    text = jsonl({"scenario_id": " s1 ", "prompt": "这件多少钱", "response_a": "99 元",
                  "response_b": "不知道", "judge": "a"}, "",
                 {"scenario_id": "s2", "response_a": "x", "response_b": "y"})
    assert parse_review_items(text) == [ReviewItem("s1", "这件多少钱", "99 元", "不知道", "a"),
                                        ReviewItem("s2", "", "x", "y", None)]


def test_every_problem_is_listed_with_its_line():
    text = jsonl("{not json", [1, 2], {"scenario_id": "s1", "response_a": "", "response_b": 3},
                 {"scenario_id": "s2", "response_a": "x", "response_b": "y", "judge": "A",
                  "prompt": 5},
                 {"scenario_id": "s3", "response_a": "x", "response_b": "y"},
                 {"scenario_id": "s3", "response_a": "x", "response_b": "y"})
    with pytest.raises(ConfigError) as err:
        parse_review_items(text, "f.jsonl")
    found = [str(p) for p in err.value.problems]
    assert found == [
        "f.jsonl:1: not JSON (Expecting property name enclosed in double quotes)",
        "f.jsonl:2: a row must be a JSON object",
        "f.jsonl:3: response_a: missing or not a non-empty string",
        "f.jsonl:3: response_b: missing or not a non-empty string",
        "f.jsonl:4: prompt: not a string",
        "f.jsonl:4: judge: 'A' is not one of a, b, tie",
        "f.jsonl:6: scenario_id 's3' repeats line 5",
    ]


def test_an_empty_file_is_refused():
    with pytest.raises(ConfigError, match="1 problem"):
        parse_review_items("\n \n")
