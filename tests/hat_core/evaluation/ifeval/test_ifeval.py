"""IFEval scoring: agreement with the official GPT-4 verdicts, hand-checked cases, offline
sentence splitting and input errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import IFEVAL, NLTK_DATA, shared, write_rows

from hat_core.errors import NotFoundError
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.ifeval import verdicts as ifeval
from hat_core.evaluation.ifeval.checker import UNTRAINED, is_random_dependent, load_splitter

ROOT = Path(__file__).resolve().parents[4]






def prompt(key: int, ids: list[str], kwargs: list[dict], text: str | None = None) -> dict:
    return {"key": key, "prompt": text or f"prompt {key}", "instruction_id_list": ids,
            "kwargs": kwargs}


def verdicts(tmp_path: Path, rows: list[dict], responses: dict[int, str],
             nltk_data: Path | None = None) -> dict[int, ifeval.IfevalVerdict]:
    prompts = ifeval.load_prompts(write_rows(tmp_path / "in.jsonl", rows))
    matched = ifeval.Responses(responses, ())
    result = ifeval.score(prompts, matched, load_splitter(nltk_data))
    return {v.key: v for v in result.verdicts}


# --- the published GPT-4 run --------------------------------------------------------------

@pytest.fixture(scope="module")
def gpt4() -> tuple[list[ifeval.IfevalPrompt], ifeval.Responses, dict[int, dict]]:
    prompts = ifeval.load_prompts(shared(IFEVAL / "input_data_gpt4_20231107_145030.jsonl"))
    responses = ifeval.load_responses(
        shared(IFEVAL / "input_response_data_gpt4_20231107_145030.jsonl"), prompts)
    lines = shared(IFEVAL / "gpt4_reference_verdicts.jsonl").read_text().splitlines()
    reference = {row["key"]: row for row in map(json.loads, lines)}
    return prompts, responses, reference


def test_gpt4_verdicts_match_the_official_checker(gpt4):
    prompts, responses, reference = gpt4
    result = ifeval.score(prompts, responses, load_splitter(shared(NLTK_DATA)))
    s = result.summary
    assert s.prompts == 541 and s.missing_responses == 0 and s.unmatched_responses == 0
    assert 416 <= s.strict_count <= 417 and 429 <= s.loose_count <= 431
    assert s.sentence_splitter.startswith("punkt_tab:")
    random_keys = {v.key for v in result.verdicts if v.random_dependent}
    assert random_keys == {1122, 1129}
    differing = [v.key for v in result.verdicts if v.to_dict() != reference[v.key]]
    assert set(differing) <= random_keys


def test_gpt4_with_the_untrained_splitter_stays_in_range(gpt4):
    prompts, responses, reference = gpt4
    s = ifeval.score(prompts, responses, load_splitter(None)).summary
    assert s.sentence_splitter == UNTRAINED
    assert 416 <= s.strict_count <= 417 and 429 <= s.loose_count <= 431


# --- hand-checked cases -------------------------------------------------------------------

HAND = [
    (prompt(1, ["punctuation:no_comma"], [{}]), "hello world", True),
    (prompt(2, ["punctuation:no_comma"], [{}]), "hello, world", False),
    (prompt(3, ["change_case:english_lowercase"], [{}]),
     "this answer is written in plain english and only uses lowercase letters.", True),
    (prompt(4, ["change_case:english_lowercase"], [{}]), "This Answer Has Capitals.", False),
    (prompt(5, ["startend:end_checker"], [{"end_phrase": "Any other questions?"}]),
     "The cup keeps tea warm.\nAny other questions?", True),
    (prompt(6, ["startend:end_checker"], [{"end_phrase": "Any other questions?"}]),
     "Any other questions? The cup keeps tea warm.", False),
    (prompt(7, ["detectable_format:json_format"], [{}]), '```json\n{"price": 99}\n```', True),
    (prompt(8, ["detectable_format:json_format"], [{}]), "price: 99", False),
    (prompt(9, ["detectable_format:number_bullet_lists"], [{"num_bullets": 2}]),
     "* warm\n* light", True),
    (prompt(10, ["detectable_format:number_bullet_lists"], [{"num_bullets": 2}]),
     "* warm\n* light\n* cheap", False),
    (prompt(11, ["keywords:existence"], [{"keywords": ["优惠券", "cup"]}]),
     "领取优惠券后下单这个 Cup。", True),
    (prompt(12, ["length_constraints:number_words"],
            [{"relation": "less than", "num_words": 5}]), "one two three four five", False),
    (prompt(13, ["startend:quotation"], [{}]), '"all wrapped"', True),
    (prompt(14, ["detectable_format:title", "punctuation:no_comma"], [{}, {}]),
     "<<Tea cup>>\nIt keeps tea warm", True),
    (prompt(15, ["detectable_format:title", "punctuation:no_comma"], [{}, {}]),
     "<<Tea cup>>\nIt keeps tea warm, and light", False),
]


@pytest.mark.parametrize("row,response,expected", HAND, ids=[str(r[0]["key"]) for r in HAND])
def test_hand_checked_case(tmp_path, row, response, expected):
    v = verdicts(tmp_path, [row], {row["key"]: response})[row["key"]]
    assert v.strict is expected
    assert not v.missing_response and not v.random_dependent


def test_loose_forgives_a_preamble_line_that_strict_does_not(tmp_path):
    row = prompt(1, ["punctuation:no_comma"], [{}])
    v = verdicts(tmp_path, [row], {1: "Sure, here it is:\nhello world"})[1]
    assert (v.strict, v.loose) == (False, True)
    assert v.strict_instructions == (False,) and v.loose_instructions == (True,)


def test_null_kwargs_from_the_hf_copy_are_dropped(tmp_path):
    nulls = {"num_bullets": 2, "keywords": None, "end_phrase": None, "relation": None}
    rows = [prompt(1, ["detectable_format:number_bullet_lists"], [nulls])]
    assert verdicts(tmp_path, rows, {1: "* a\n* b"})[1].strict


def test_sentence_count_depends_on_the_splitter(tmp_path):
    rows = [prompt(1, ["length_constraints:number_sentences"],
                   [{"relation": "less than", "num_sentences": 3}])]
    text = {1: "Dr. Smith arrived at noon. He left at once."}
    assert verdicts(tmp_path, rows, text, shared(NLTK_DATA))[1].strict  # 2 sentences
    assert not verdicts(tmp_path, rows, text, None)[1].strict  # untrained: 3 sentences


def test_random_dependence_is_detected():
    assert is_random_dependent("keywords:letter_frequency",
                               {"letter": "#", "let_frequency": 4, "let_relation": "at least"},
                               "p")
    assert not is_random_dependent("keywords:letter_frequency",
                                   {"letter": "a", "let_frequency": 4,
                                    "let_relation": "at least"}, "p")
    assert not is_random_dependent("punctuation:no_comma", {}, "p")


def test_missing_and_unmatched_responses(tmp_path):
    rows = [prompt(1, ["punctuation:no_comma"], [{}], "first"),
            prompt(2, ["punctuation:no_comma"], [{}], "second")]
    prompts = ifeval.load_prompts(write_rows(tmp_path / "in.jsonl", rows))
    responses = ifeval.load_responses(write_rows(tmp_path / "r.jsonl", [
        {"prompt": "first", "response": "ok"},
        {"key": 99, "response": "nobody asked"},
        {"prompt": "not a prompt", "response": "x"},
    ]), prompts)
    result = ifeval.score(prompts, responses, load_splitter(None))
    by_key = {v.key: v for v in result.verdicts}
    assert by_key[1].strict and not by_key[1].missing_response
    assert by_key[2].missing_response and not by_key[2].strict and not by_key[2].loose
    assert [u.where.rsplit(":", 1)[1] for u in result.unmatched] == ["2", "3"]
    assert result.summary.prompt_strict == 0.5 and result.summary.missing_responses == 1


def test_bad_prompt_rows_name_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(prompt(1, ["punctuation:no_comma"], [{}])) + "\n"
                    + json.dumps(prompt(2, ["no:such_instruction"], [{}])) + "\n"
                    + json.dumps(prompt(3, ["detectable_format:number_bullet_lists"],
                                        [{"bogus": 1}])) + "\n" + "{not json\n")
    with pytest.raises(EvalInputError) as err:
        ifeval.load_prompts(path)
    report = err.value.report()
    assert f"{path}:4" in report and "not JSON" in report
    with pytest.raises(EvalInputError) as err:
        ifeval.load_prompts(write_rows(tmp_path / "b2.jsonl", [
            prompt(1, ["no:such_instruction"], [{}]),
            prompt(2, ["detectable_format:number_bullet_lists"], [{"bogus": 1}]),
            prompt(2, ["punctuation:no_comma"], [{}])]))
    paths = [p.path for p in err.value.problems]
    assert [p.rsplit(":", 1)[1] for p in paths] == ["1", "2", "3"]
    assert "unknown instruction id" in err.value.report() and "bogus" in err.value.report()


def test_missing_files_and_bad_nltk_dir(tmp_path):
    with pytest.raises(NotFoundError):
        ifeval.load_prompts(tmp_path / "nope.jsonl")
    with pytest.raises(NotFoundError):
        load_splitter(tmp_path)


def test_scoring_never_touches_the_network(tmp_path):
    """In a fresh process with no nltk data and sockets disabled, scoring still works."""
    row = prompt(1, ["length_constraints:number_sentences", "change_case:capital_word_frequency"],
                 [{"relation": "less than", "num_sentences": 3},
                  {"capital_relation": "less than", "capital_frequency": 5}])
    inputs = write_rows(tmp_path / "in.jsonl", [row])
    code = f"""
import socket
def refuse(*a, **k):
    raise RuntimeError("network used")
socket.socket.connect = refuse
socket.create_connection = refuse
from hat_core.evaluation.ifeval import verdicts as ifeval
from hat_core.evaluation.ifeval.checker import load_splitter
p = ifeval.load_prompts({str(inputs)!r})
r = ifeval.score(p, ifeval.Responses({{1: "One. Two."}}, ()), load_splitter(None))
print(r.summary.strict_count, r.summary.sentence_splitter)
"""
    env = dict(os.environ, NLTK_DATA=str(tmp_path / "empty"), HOME=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "untrained"]
