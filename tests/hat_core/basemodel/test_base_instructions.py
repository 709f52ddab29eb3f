"""Instruction checkers and tool-call parsing used by the probe."""

from __future__ import annotations

import pytest

from hat_core.basemodel.instructions import Check, passes, strip_reasoning
from hat_core.basemodel.probe import parse_tool_call

CASES = [
    (Check("sentences", 2), "One. Two.", "One. Two. Three."),
    (Check("sentences", 2), "一句。两句。", "一句。"),
    (Check("max_words", 3), "a b c", "a b c d"),
    (Check("bullets", 2), "* a\n* b", "* a"),
    (Check("paragraphs", 2), "a\n\n***\n\nb", "a b"),
    (Check("keywords", ("lamp", "river")), "a lamp by the river", "a lamp"),
    (Check("lowercase"), "all lower.", "Not lower."),
    (Check("uppercase"), "ALL UPPER.", "Not upper."),
    (Check("no_commas"), "no commas here", "a, b"),
    (Check("title"), "<<Tea>>\n\nText.", "Tea\n\nText."),
    (Check("end_phrase", "That is all."), "Hi. That is all.", "That is all. Hi."),
    (Check("quotes"), '"quoted"', "quoted"),
    (Check("json"), '{"answer": "x"}', "answer: x"),
]


@pytest.mark.parametrize(("check", "good", "bad"), CASES)
def test_checkers(check, good, bad):
    assert passes(check, good)
    assert not passes(check, bad)


def test_strip_reasoning():
    assert strip_reasoning("<think>\nplan\n</think>\n\nreply") == "reply"
    assert strip_reasoning("reply") == "reply"


def test_parse_tool_call():
    call = parse_tool_call('<think>\nx\n</think>\n\n<tool_call>\n{"name": "fetchWx", '
                           '"arguments": {"city": "上海"}}\n</tool_call>')
    assert (call.name, call.arguments) == ("fetchWx", {"city": "上海"})
    assert parse_tool_call("<tool_call>\n{not json}\n</tool_call>").name is None
    assert parse_tool_call('<tool_call>\n{"name": "x"}\n</tool_call>').name is None
    assert parse_tool_call("no call").name is None
