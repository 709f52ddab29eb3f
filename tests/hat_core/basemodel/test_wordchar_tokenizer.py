"""The word/char tokenizer (`toy` sizes): round trips, identifiers as characters, prose words
whole, TRL's chat template, token roles, and the compact corpus rendering."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import trl

from hat_core.basemodel.corpus import generate_corpus, render_sample
from hat_core.basemodel.sample import fold_tools, render_text
from hat_core.basemodel.sizes import get_size
from hat_core.basemodel.tokenizer import (
    EOS,
    MARKUP_TOKENS,
    SPECIAL_TOKENS,
    UNK,
    load_tokenizer,
    train_wordchar_tokenizer,
)
from hat_core.basemodel.tool_corpus import ToolMix, tool_sample
from hat_core.harness.render import COMPACT_STYLES

TEXTS = ["北京明天天气怎么样？", "Convert 12 km to miles, please.", "getWeatherForecast",
         "fetch_train_tickets_v2", "ykqVgjT", "用户想查天气。weatherForecast可以做到。",
         '{"name": "x", "arguments": {"城市": "上海", "n": 3}}', "tabs\t\nand the user"]


@pytest.fixture(scope="module")
def corpus_texts() -> list[str]:
    mix = get_size("toy").tool_mix()
    return [render_sample(s, "compact") for s in generate_corpus(2, 300, mix)]


@pytest.fixture(scope="module")
def wordchar(corpus_texts):
    return train_wordchar_tokenizer(corpus_texts, max_words=400, min_word_count=3,
                                    extra_chars="北京明天气怎么样？用户想查。可以做到城市上海")


def tokens(tok, text: str) -> list[str]:
    return tok.convert_ids_to_tokens(tok(text, add_special_tokens=False)["input_ids"])


def test_round_trip(wordchar, corpus_texts):
    for text in TEXTS + corpus_texts[:20]:
        ids = wordchar(text, add_special_tokens=False)["input_ids"]
        assert wordchar.decode(ids) == text


def test_identifiers_are_characters_and_prose_words_whole(wordchar):
    for name in ("get_price", "getPrice", "GetPrice", "ykqVgjT", "user_id"):
        assert tokens(wordchar, name) == list(name)
    assert tokens(wordchar, "the user") == ["the", " ", "user"]
    assert tokens(wordchar, "zzunseenwordzz") == list("zzunseenwordzz")


def test_unknown_character_is_unk(wordchar):
    assert tokens(wordchar, "龘") == [UNK]


def test_chat_template_is_trls_qwen3_and_survives_save(wordchar, tmp_path: Path):
    trl_file = Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja"
    assert wordchar.chat_template == trl_file.read_text("utf-8")
    wordchar.save_pretrained(tmp_path)
    loaded = load_tokenizer(tmp_path)
    assert loaded.chat_template == trl_file.read_text("utf-8")
    assert loaded.padding_side == "left" and loaded.eos_token == EOS
    text = "用户想查天气 <tool_call>get_price</tool_call>"
    assert loaded(text)["input_ids"] == wordchar(text)["input_ids"]


def test_markup_tokens_single_and_not_special(wordchar):
    added = {t.content: t for t in wordchar.added_tokens_decoder.values()}
    for token in MARKUP_TOKENS:
        assert not added[token].special
        assert tokens(wordchar, token) == [token]
    for token in SPECIAL_TOKENS:
        assert added[token].special
    ids = wordchar("<think>\nx\n</think>\n<tool_call>\n{}\n</tool_call><|im_end|>",
                   add_special_tokens=False)["input_ids"]
    kept = wordchar.decode(ids, skip_special_tokens=True)
    assert "<tool_call>" in kept and "</think>" in kept and EOS not in kept


def test_chat_template_render_matches_render_text(wordchar):
    sample = tool_sample(random.Random(4), mix=ToolMix(2, 8, 0.5))
    messages = fold_tools(sample.messages, sample.tools)
    assert wordchar.apply_chat_template(messages, tokenize=False) == render_text(
        sample.messages, sample.tools, profile="compact")


def test_compact_fold_puts_every_tool_in_the_system_prompt_description_first():
    sample = tool_sample(random.Random(9), mix=ToolMix(2, 8, 0.5))
    text = render_text(sample.messages, sample.tools, profile="compact")
    assert "<tools>" not in text and "<tools>" in render_text(sample.messages, sample.tools)
    for tool in sample.tools:
        fn = tool["function"]
        line = next(x for x in text.splitlines() if f": {fn['name']}(" in x)
        assert line.startswith("- ") and line.index(":") < line.index(fn["name"])
        for param in fn["parameters"]["properties"]:
            assert param in line


def test_toy_mix_offers_two_to_eight_tools_half_opaque():
    rng = random.Random(0)
    counts = [len(tool_sample(rng, mix=ToolMix(2, 8, 0.5)).tools) for _ in range(300)]
    assert min(counts) == 2 and max(counts) == 8


def test_older_sizes_keep_their_cache_keys():
    late = {"tokenizer_kind", "render_profile", "min_tools", "max_tools", "opaque_names"}
    for name in ("test", "tiny", "small"):
        assert not late & set(get_size(name).as_dict())
    assert get_size("toy").as_dict()["tokenizer_kind"] == "wordchar"
    assert get_size("toy").as_dict()["render_profile"] == "compact"


def test_compact_args_folds_parameter_descriptions():
    tools = [{"type": "function", "function": {
        "name": "lookup", "description": "查询库存",
        "parameters": {"type": "object", "required": ["item"],
                       "properties": {"item": {"type": "string", "description": "商品编号"},
                                      "size": {"type": "string", "description": "规格，可选"}}}}}]
    messages = [{"role": "user", "content": "有货吗"}]
    plain = render_text(messages, tools, profile="compact")
    args = render_text(messages, tools, profile="compact-args")
    assert "lookup(item, size?)" in plain
    assert "lookup(item 商品编号, size? 规格)" in args
    assert "<tools>" not in args
    assert fold_tools(messages, tools, COMPACT_STYLES["compact-args"])[0]["role"] == "system"
