"""BFCL-format tool-call matching: one right and one wrong call per rule and error type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hat_core.evaluation.bfcl.calls import (
    Call,
    Candidate,
    Case,
    ExpectedCall,
    FunctionDoc,
    judge_case,
    load_candidates,
    load_cases,
    parse_call,
    same_name,
    score,
)
from hat_core.evaluation.bfcl.values import items_exact, normalise, type_ok, value_ok
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.jsonl import Row

ROOT = Path(__file__).resolve().parents[4]
BFCL = ROOT / "examples" / "bfcl"

PRICE = FunctionDoc("catalog.price", "price", {
    "type": "dict", "required": ["product_id"],
    "properties": {"product_id": {"type": "string"}, "quantity": {"type": "integer"},
                   "discount": {"type": "float"}, "gift": {"type": "boolean"},
                   "tags": {"type": "array", "items": {"type": "string"}},
                   "address": {"type": "dict"}}})
WEATHER = FunctionDoc("get_weather", "weather", {
    "type": "dict", "required": ["city"], "properties": {"city": {"type": "string"}}})


def case(*expected: ExpectedCall) -> Case:
    return Case("c1", "q", (PRICE, WEATHER), expected)


def verdict(expected: list[ExpectedCall], *calls: tuple[str, object]):
    return judge_case(case(*expected),
                      Candidate("c1", tuple(Call(n, a) for n, a in calls)))


PRICE_GT = ExpectedCall("catalog.price", {"product_id": ["SKU-1"], "quantity": [2, ""],
                                          "discount": [0.5, ""]})


@pytest.mark.parametrize("args,error", [
    ({"product_id": "SKU-1", "quantity": 2}, None),
    ({"product_id": "sku 1"}, None),                            # normalised, optional left out
    ({"product_id": "SKU-1", "discount": 0.5}, None),
    ({"product_id": "SKU-2"}, "wrong_value"),
    ({"product_id": "SKU-1", "quantity": 3}, "wrong_value"),
    ({"product_id": "SKU-1", "quantity": "2"}, "wrong_type"),
    ({"product_id": "SKU-1", "quantity": True}, "wrong_type"),  # a bool is not an integer
    ({"product_id": "SKU-1", "quantity": 2.0}, "wrong_type"),   # no float for an integer
    ({"quantity": 2}, "missing_required"),
    ({"product_id": "SKU-1", "colour": "red"}, "unexpected_argument"),
    ({"product_id": "SKU-1", "gift": True}, "unexpected_argument"),  # not in ground truth
])
def test_single_call_rules(args, error):
    v = verdict([PRICE_GT], ("catalog.price", args))
    assert v.valid is (error is None) and v.error_type == error


def test_int_is_accepted_for_float():
    gt = ExpectedCall("catalog.price", {"product_id": ["SKU-1"], "discount": [1.0]})
    assert verdict([gt], ("catalog.price", {"product_id": "SKU-1", "discount": 1})).valid


def test_ground_truth_without_empty_string_requires_the_argument():
    gt = ExpectedCall("catalog.price", {"product_id": ["SKU-1"], "quantity": [2]})
    v = verdict([gt], ("catalog.price", {"product_id": "SKU-1"}))
    assert v.error_type == "missing_required" and "ground truth" in v.error


def test_function_names_with_dots_match_underscores():
    assert same_name("catalog.price", "catalog_price")
    assert not same_name("catalog.price", "catalog_prices")
    assert verdict([PRICE_GT], ("catalog_price", {"product_id": "SKU-1"})).valid
    v = verdict([PRICE_GT], ("get_weather", {"city": "x"}))
    assert v.error_type == "wrong_function"


def test_call_count():
    assert verdict([PRICE_GT]).error_type == "wrong_count"
    two = [("catalog.price", {"product_id": "SKU-1"})] * 2
    assert verdict([PRICE_GT], *two).error_type == "wrong_count"
    assert verdict([]).valid  # irrelevance: no call expected, none made


def test_parallel_calls_match_in_any_order():
    a = ExpectedCall("get_weather", {"city": ["Beijing"]})
    b = ExpectedCall("get_weather", {"city": ["Shanghai"]})
    assert verdict([a, b], ("get_weather", {"city": "shanghai"}),
                   ("get_weather", {"city": "Beijing"})).valid
    v = verdict([a, b], ("get_weather", {"city": "Beijing"}), ("get_weather", {"city": "Xi'an"}))
    assert v.error_type == "wrong_value"


def test_parallel_pairing_is_one_to_one_not_greedy():
    loose = ExpectedCall("get_weather", {"city": ["Beijing", "Shanghai"]})
    strict = ExpectedCall("get_weather", {"city": ["Beijing"]})
    # A greedy pass would give "Beijing" to `loose` and leave `strict` without a match.
    assert verdict([loose, strict], ("get_weather", {"city": "Beijing"}),
                   ("get_weather", {"city": "Shanghai"})).valid


def test_lists_and_dicts_compare_element_wise():
    gt = ExpectedCall("catalog.price", {
        "product_id": ["SKU-1"], "tags": [["Red", "big"], ""],
        "address": [{"city": ["Hangzhou"], "district": ["Xihu", ""]}]})
    ok = {"product_id": "SKU-1", "tags": ["red", "BIG"], "address": {"city": "hangzhou"}}
    assert verdict([gt], ("catalog.price", ok)).valid
    for bad, error in [({"tags": ["big", "red"]}, "wrong_value"),
                       # "" among the allowed tags admits any items (BFCL), so 3 is a value error
                       ({"tags": ["red", 3]}, "wrong_value"),
                       ({"address": {"city": "Hangzhou", "zip": "310000"}}, "wrong_value"),
                       ({"address": {"district": "Xihu"}}, "wrong_value")]:
        assert verdict([gt], ("catalog.price", ok | bad)).error_type == error


SCORES = FunctionDoc("scores.set", "scores", {
    "type": "dict", "required": [],
    "properties": {"weights": {"type": "array", "items": {"type": "float"}},
                   "mode": {"type": "string"}, "count": {"type": "integer"}}})


def scores_verdict(allowed: dict, args: dict):
    return judge_case(Case("s1", "q", (SCORES,), (ExpectedCall("scores.set", allowed),)),
                      Candidate("s1", (Call("scores.set", args),)))


def test_bfcl_rule_strict_list_items_an_int_is_not_a_float_inside_a_list():
    gt = {"weights": [[1.0, 2.5]]}
    v = scores_verdict(gt, {"weights": [1, 2.5]})
    assert v.error_type == "wrong_type" and "items must be exactly float, got int 1" in v.error
    assert scores_verdict(gt, {"weights": [1.0, 2.5]}).valid
    assert not scores_verdict(gt, {"weights": [1.0, True]}).valid
    # the top level stays lenient: an int for a float parameter is accepted
    assert verdict([ExpectedCall("catalog.price", {"product_id": ["SKU-1"], "discount": [1.0]})],
                   ("catalog.price", {"product_id": "SKU-1", "discount": 1})).valid


def test_bfcl_rule_strict_list_items_admits_the_allowed_lists_own_item_type():
    # an allowed list whose first value is an int admits int items (BFCL's nested check
    # falls back to the type of the possible answer)
    assert scores_verdict({"weights": [[1, 2]]}, {"weights": [1, 2]}).valid
    # an allowed value that is not a list (the optional marker) admits any items
    assert scores_verdict({"weights": ["", [1.0, 2.0]]}, {"weights": [1, 2]}).valid
    assert items_exact([1, 2], "float", [[1.0, 2.0], ""]) and not items_exact([1], "float",
                                                                              [[1.0]])
    assert items_exact([1, 2], "number", [[1.0, 2.0]])  # JSON-Schema names keep the top rule


def test_bfcl_rule_listed_answer_of_another_type_is_accepted():
    # a boolean for a string parameter, listed among the possible answers
    assert scores_verdict({"mode": [True, ""]}, {"mode": True}).valid
    v = scores_verdict({"mode": [True, ""]}, {"mode": False})
    assert v.error_type == "wrong_value" and "compared exactly" in v.error
    # only the first allowed value's type counts
    assert scores_verdict({"mode": ["on", True]}, {"mode": True}).error_type == "wrong_type"
    # a variable name for an integer parameter: compared exactly, no normalisation
    assert scores_verdict({"count": ["n"]}, {"count": "n"}).valid
    assert scores_verdict({"count": ["n"]}, {"count": "N"}).error_type == "wrong_value"
    assert scores_verdict({"count": [2]}, {"count": "2"}).error_type == "wrong_type"


def test_value_helpers():
    assert normalise("April 1, 2024") == normalise("april 1 2024") == "april12024"
    assert normalise("it's") == 'it"s'
    assert type_ok(3, "float") and not type_ok(True, "integer") and type_ok(None, "any")
    assert value_ok(3, [3.0]) and not value_ok(True, [1]) and not value_ok("x", [""])


def test_arguments_as_json_string_and_unparseable():
    row = Row("f:1", {})
    assert parse_call(row, {"name": "f", "arguments": '{"a": 1}'}).arguments == {"a": 1}
    assert parse_call(row, {"name": "f", "arguments": ""}).arguments == {}
    assert parse_call(row, {"name": "f", "arguments": "{a: 1"}).arguments is None
    assert parse_call(row, {"name": "f", "arguments": "[1]"}).arguments is None
    wrapped = {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert parse_call(row, wrapped) == Call("f", {})
    v = verdict([PRICE_GT], ("catalog.price", None))
    assert v.error_type == "unparseable_arguments"


def test_missing_candidate_and_unknown_candidate_ids():
    result = score([case(PRICE_GT)], [Candidate("other", ())])
    assert result.verdicts[0].error_type == "missing_candidate"
    assert result.summary.unmatched_candidates == ("other",)
    assert result.summary.accuracy == 0.0


def test_sample_files_right_and_wrong():
    cases = load_cases(BFCL / "questions.jsonl", BFCL / "possible_answers.jsonl")
    right = score(cases, load_candidates(BFCL / "candidates_right.jsonl"))
    assert right.summary.accuracy == 1.0 and right.summary.valid == len(cases)
    wrong = score(cases, load_candidates(BFCL / "candidates_wrong.jsonl"))
    assert wrong.summary.valid == 0
    assert set(wrong.summary.errors) == {
        "wrong_value", "wrong_type", "wrong_function", "wrong_count", "missing_required",
        "unexpected_argument", "unparseable_arguments"}


def test_malformed_rows_name_file_and_line(tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "a", "function": []}) + "\n"
                         + json.dumps({"id": "b", "function": [{"description": "x"}]}) + "\n")
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"id": "a", "ground_truth": [{"f": {"x": 1}}]}) + "\n")
    with pytest.raises(EvalInputError) as err:
        load_cases(questions, answers)
    assert f"{questions}:2" in err.value.report()
    with pytest.raises(EvalInputError) as err:
        load_cases(BFCL / "questions.jsonl", answers)
    assert f"{answers}:1" in err.value.report()
    candidates = tmp_path / "c.jsonl"
    candidates.write_text('{"id": "a", "calls": [{"arguments": {}}]}\n')
    with pytest.raises(EvalInputError) as err:
        load_candidates(candidates)
    assert f"{candidates}:1" in err.value.report()
