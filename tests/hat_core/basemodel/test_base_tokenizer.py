"""The base tokenizer: byte-level round trips, TRL's chat template, token roles."""

from __future__ import annotations

import random
from pathlib import Path

import trl

from hat_core.basemodel.sample import render_text
from hat_core.basemodel.tokenizer import (
    EOS,
    MARKUP_TOKENS,
    PAD,
    SPECIAL_TOKENS,
    load_tokenizer,
    qwen3_chat_template,
)
from hat_core.basemodel.tool_corpus import tool_sample

TEXTS = ["北京明天天气怎么样？", "Convert 12 km to miles, please.", "getWeatherForecast",
         "fetch_train_tickets_v2", "ykqVgjT", "用户想查天气。weatherForecast可以做到。",
         '{"name": "x", "arguments": {"城市": "上海", "n": 3}}', "emoji 🚄 and tabs\t\n"]


def test_round_trip_chinese_english_identifiers(small_tokenizer):
    for text in TEXTS:
        ids = small_tokenizer(text, add_special_tokens=False)["input_ids"]
        assert small_tokenizer.decode(ids) == text


def test_chat_template_is_trls_qwen3_byte_for_byte(small_tokenizer):
    trl_file = Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja"
    assert qwen3_chat_template() == trl_file.read_text("utf-8")
    assert small_tokenizer.chat_template == trl_file.read_text("utf-8")


def test_markup_tokens_are_single_non_special_tokens(small_tokenizer):
    added = {t.content: t for t in small_tokenizer.added_tokens_decoder.values()}
    for token in MARKUP_TOKENS:
        assert not added[token].special
        assert len(small_tokenizer(token, add_special_tokens=False)["input_ids"]) == 1
    for token in SPECIAL_TOKENS:
        assert added[token].special
    assert small_tokenizer.eos_token == EOS
    assert small_tokenizer.pad_token == PAD


def test_markup_survives_skip_special_tokens(small_tokenizer):
    ids = small_tokenizer("<think>\nok\n</think>\n\n<tool_call>\n{}\n</tool_call><|im_end|>",
                          add_special_tokens=False)["input_ids"]
    text = small_tokenizer.decode(ids, skip_special_tokens=True)
    assert text == "<think>\nok\n</think>\n\n<tool_call>\n{}\n</tool_call>"


def test_chat_with_tools_and_calls_tokenises_without_unknown_pieces(small_tokenizer):
    sample = tool_sample(random.Random(3))
    text = small_tokenizer.apply_chat_template(sample.messages, tools=sample.tools, tokenize=False)
    assert text == render_text(sample.messages, sample.tools)
    assert "<tool_call>" in text and "<tool_response>" in text and "<think>" in text
    ids = small_tokenizer(text, add_special_tokens=False)["input_ids"]
    assert small_tokenizer.unk_token_id is None or small_tokenizer.unk_token_id not in ids
    assert max(ids) < len(small_tokenizer)
    assert small_tokenizer.decode(ids) == text


def test_saved_tokenizer_loads_with_left_padding_and_same_template(small_tokenizer, tmp_path):
    small_tokenizer.save_pretrained(tmp_path)
    loaded = load_tokenizer(tmp_path)
    assert loaded.padding_side == "left"
    assert loaded.chat_template == qwen3_chat_template()
    assert loaded("上海 getWeather")["input_ids"] == small_tokenizer("上海 getWeather")["input_ids"]
