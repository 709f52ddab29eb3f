"""Name generation: words, case styles, valid and fresh identifiers."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hat_core.harness.model import IDENTIFIER
from hat_core.hsa.heldout import name_is_heldout
from hat_core.hsa.names import NameOdds, join, new_name, words
from hat_core.hsa.vocab import HELDOUT, TRAIN

OLD = ("get_price", "transfer_to_human", "product_id", "calc_final_price", "price_and_coupons",
       "height_cm", "getProductInfo", "x", "a1", "_private")


@pytest.mark.parametrize("name, expected", [
    ("getProductInfo", ["get", "product", "info"]), ("GET_PRICE", ["get", "price"]),
    ("cha-jia_ge", ["cha", "jia", "ge"]), ("fetchPriceV2", ["fetch", "price", "v"]),
    ("HTTPServer", ["http", "server"]),
])
def test_words(name, expected):
    assert words(name) == expected


def test_join_styles():
    parts = ["get", "on_hand"]
    assert [join(parts, s) for s in ("snake", "camel", "pascal", "kebab", "screaming")] == [
        "get_on_hand", "getOnHand", "GetOnHand", "get-on-hand", "GET_ON_HAND"]
    with pytest.raises(ValueError):
        join(parts, "dotted")


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), old=st.sampled_from(OLD), heldout=st.booleans())
def test_new_names_are_valid_fresh_and_from_their_pool(seed, old, heldout):
    pool = HELDOUT if heldout else TRAIN
    taken = {"fetch_price", "getPricing"}
    name = new_name(old, random.Random(seed), pool, NameOdds(opaque=0.2, affix=0.5), taken)
    assert IDENTIFIER.match(name)
    assert name != old and name not in taken
    assert name_is_heldout(name) == heldout


def test_a_crowded_neighbourhood_falls_back_to_tagged_names():
    rng = random.Random(0)
    taken: set[str] = set()
    for _ in range(300):
        taken.add(new_name("x", rng, TRAIN, NameOdds(opaque=0.0), taken))
    assert len(taken) == 300
    assert all(IDENTIFIER.match(n) and not name_is_heldout(n) for n in taken)
