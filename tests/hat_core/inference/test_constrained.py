"""Tool-call constrained decoding (`hat_core.inference.constrained`): where a call's name and
argument keys are open, what may continue them, on the shipped base's real tokenizer; and the
shipped base played on v2 with and without it (every constrained call names an offered tool
with its own parameters; free decoding spells names the harness does not have)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from held_calls import assert_only_held_calls_stay_offered, played_calls
from transformers import AutoTokenizer

from hat_core.harness.io import load_harness
from hat_core.inference.backends import TransformersBackend
from hat_core.inference.constrained import (
    ToolCallConstraint,
    allowed_ids,
    offered,
    open_span,
)

ROOT = Path(__file__).resolve().parents[3]
TOY_LONG = ROOT / "examples" / "models" / "toy-long"
TOOLS = {"query_price": ("product_id", "sku"), "query_order": ("order_id",),
         "list_coupons": ()}
CALL = '<tool_call>\n{"name": '


@pytest.mark.parametrize("text, want", [
    ("先查一下", None),                                          # no call open
    (CALL + '"qu', ("qu", list(TOOLS))),                         # inside the name
    (CALL + '"', ("", list(TOOLS))),
    (CALL + '"query_price", "arguments": {"', ("", ["product_id", "sku"])),
    (CALL + '"query_price", "arguments": {"product_id": "P1", "s', ("s", ["product_id", "sku"])),
    (CALL + '"query_price", "arguments": {"product_id": "P', None),   # a value is free
    (CALL + '"query_price", "arguments": {"product_id": "a\\"b", "', ("", ["product_id", "sku"])),
    (CALL + '"query_price", "arguments": {"x": {"', None),       # a nested object's keys
    (CALL + '"query_price", "arguments": {"sku": "红"}}', None),  # the arguments closed
    (CALL + '"quxx", "arguments": {"', None),                    # a name it does not offer
    (CALL + '"query_price", "arguments": {}}\n</tool_call>\n', None),  # the call closed
])
def test_open_span_finds_the_names_and_keys_still_being_written(text, want):
    assert open_span(text, TOOLS) == want


def test_offered_reads_openai_specs_and_bare_functions():
    specs = [{"type": "function", "function": {"name": "a", "parameters": {
        "type": "object", "properties": {"x": {}, "y": {}}}}}, {"name": "b"}]
    assert offered(specs) == {"a": ("x", "y"), "b": ()}


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(str(TOY_LONG))


def test_allowed_tokens_continue_an_offered_name_or_close_it(tokenizer):
    from hat_core.inference.constrained import _vocab

    texts, by_text = _vocab(tokenizer)
    assert {texts[i] for i in allowed_ids("query_", list(TOOLS), by_text)} == {"p", "o"}
    assert {texts[i] for i in allowed_ids("query_price", list(TOOLS), by_text)} == {'"'}
    assert allowed_ids("get_", list(TOOLS), by_text) == set()


def test_the_hook_allows_only_the_continuations_inside_a_name(tokenizer):
    specs = [{"name": n, "parameters": {"properties": {p: {} for p in ps}}}
             for n, ps in TOOLS.items()]
    allowed = ToolCallConstraint(tokenizer, specs, prompt_len=0, vocab_size=len(tokenizer))
    inside = allowed(0, torch.tensor(tokenizer(CALL + '"query_o')["input_ids"]))
    assert [tokenizer.decode([i]) for i in inside] == ["r"]
    key = allowed(0, torch.tensor(tokenizer(CALL + '"query_price", "arguments": {"s')
                                  ["input_ids"]))
    assert [tokenizer.decode([i]) for i in key] == ["k"]
    outside = allowed(0, torch.tensor(tokenizer("你好")["input_ids"]))
    assert outside == list(range(len(tokenizer))) and allowed.steps_constrained == 2


def test_constrained_calls_name_offered_tools_and_their_parameters():
    harness = load_harness(ROOT / "examples" / "harnesses" / "v2.yaml")
    free = TransformersBackend(TOY_LONG, device="cpu")
    held = TransformersBackend(TOY_LONG, device="cpu", constrain_tools=True)
    held.model = free.model
    assert_only_held_calls_stay_offered(played_calls(free, harness),
                                        played_calls(held, harness), harness)
