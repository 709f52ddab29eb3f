"""The word-part tokenizer (`toy-parts`): a known word inside a name is one token with its
separator, in every case style; unknown parts, opaque names and numbers stay characters; the
lexicon holds HSA's training words and no held-out one; round trips and the chat template."""

from __future__ import annotations

from pathlib import Path

import pytest

from hat_core.basemodel.build import harness_lexicon
from hat_core.basemodel.corpus import generate_corpus, render_sample
from hat_core.basemodel.sizes import get_size
from hat_core.basemodel.tokenizer import (
    load_tokenizer,
    part_forms,
    qwen3_chat_template,
    train_wordpart_tokenizer,
)
from hat_core.hsa.heldout import name_is_heldout
from hat_core.hsa.vocab import HELDOUT, english_words

LEXICON = ("query", "price", "order", "get", "find", "products", "weight", "inventory", "id")


@pytest.fixture(scope="module")
def corpus_texts() -> list[str]:
    mix = get_size("toy-parts").tool_mix()
    return [render_sample(s, "compact") for s in generate_corpus(2, 300, mix)]


@pytest.fixture(scope="module")
def wordpart(corpus_texts):
    return train_wordpart_tokenizer(corpus_texts, max_words=400, min_word_count=3,
                                    lexicon=LEXICON)


def tokens(tok, text: str) -> list[str]:
    return tok.convert_ids_to_tokens(tok(text, add_special_tokens=False)["input_ids"])


@pytest.mark.parametrize(("name", "parts"), [
    ("query_price", ["query", "_price"]),
    ("query_order", ["query", "_order"]),
    ("getPrice", ["get", "Price"]),
    ("GetPrice", ["Get", "Price"]),
    ("find-products", ["find", "-products"]),
    ("get_inventory", ["get", "_inventory"]),
    ("weight_kg", ["weight", "_", "kg"]),  # `kg` is a prose word, `_kg` is not a part
])
def test_known_words_inside_names_are_one_token_each(wordpart, name, parts):
    assert tokens(wordpart, name) == parts


def test_a_part_ends_only_at_a_boundary(wordpart):
    # `products` is a lexicon word, `productsx` is not: the part must end where the name's
    # next part would start, so an unknown longer word falls back to characters.
    assert tokens(wordpart, "productsx") == list("productsx")
    assert tokens(wordpart, "xquery") == list("xquery")
    assert tokens(wordpart, "query2") == ["query", "2"]


def test_opaque_names_numbers_and_screaming_case_are_characters(wordpart):
    for text in ("ykyQvgjjs", "V878", "GET_PRICE"):
        assert tokens(wordpart, text) == list(text)


def test_prose_words_stay_whole(wordpart):
    assert tokens(wordpart, "the price") == ["the", " ", "price"]


def test_round_trip(wordpart, corpus_texts):
    for text in corpus_texts[:100] + ["weight_kg", "a-b_c", "getPriceNow2", "用户"]:
        ids = wordpart(text, add_special_tokens=False)["input_ids"]
        assert wordpart.decode(ids) == text


def test_lexicon_forms_are_in_even_when_the_corpus_never_uses_them(wordpart):
    vocab = wordpart.get_vocab()
    assert all(form in vocab for word in LEXICON for form in part_forms(word))


def test_bad_lexicon_word_is_refused(corpus_texts):
    with pytest.raises(ValueError, match="'Price'"):
        train_wordpart_tokenizer(corpus_texts[:5], lexicon=("Price",))


def test_harness_lexicon_holds_training_words_and_no_held_out_one():
    lexicon = set(harness_lexicon())
    assert {"price", "stock", "inventory", "query", "fetch", "sku", "variant"} <= lexicon
    assert not lexicon & (english_words(HELDOUT) - {"id"})  # `id` is a harness word itself
    # A held-out name stays recognisable: it keeps a word the tokenizer spells in characters.
    assert name_is_heldout("obtain_quote") and not {"obtain", "quote"} & lexicon


def test_saved_tokenizer_loads_the_same_with_trls_template(wordpart, tmp_path: Path):
    wordpart.save_pretrained(tmp_path)
    loaded = load_tokenizer(tmp_path)
    text = "call query_price then getInventory"
    assert loaded(text)["input_ids"] == wordpart(text)["input_ids"]
    assert loaded.chat_template == qwen3_chat_template()


def test_a_wordpart_size_builds_its_tokenizer_with_the_harness_lexicon(corpus_texts):
    from dataclasses import replace

    from hat_core.basemodel.build import _tokenizer

    spec = replace(get_size("toy-test"), tokenizer_kind="wordpart")
    tok = _tokenizer(spec, corpus_texts)
    assert tokens(tok, "query_price") == ["query", "_price"]
    assert tokens(tok, "obtain_quote") == list("obtain_quote")  # held-out words: characters
    assert get_size("toy-parts").as_dict()["tokenizer_kind"] == "wordpart"
