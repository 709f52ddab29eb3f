"""The training and held-out pools are disjoint, and their templates are usable."""

from __future__ import annotations

import pytest
from hsa_examples import HARNESSES

from hat_core.errors import ConfigError
from hat_core.harness.model import IDENTIFIER
from hat_core.hsa.heldout import HELDOUT_FORMS, HELDOUT_WORDS, name_is_heldout, pool_templates
from hat_core.hsa.names import words
from hat_core.hsa.rename import all_names
from hat_core.hsa.vocab import HELDOUT, TRAIN, english_words, has_form, pinyin_forms, pool


def _all_words(p) -> set[str]:
    forms = [f for opts in p.synonyms.values() for f in opts]
    forms += [f for opts in p.pinyin.values() for f in opts]
    forms += [f for opts in p.distractor_words.values() for f in opts]
    forms += [*p.prefixes, *p.suffixes, *p.version_tags]
    return {w for f in forms for w in words(f)}


def test_heldout_english_words_are_not_training_words_or_syllables():
    assert english_words(HELDOUT)
    assert not english_words(HELDOUT) & _all_words(TRAIN)


def test_pinyin_forms_are_disjoint_between_pools():
    train = {f for opts in TRAIN.pinyin.values() for f in opts}
    held = {f for opts in HELDOUT.pinyin.values() for f in opts}
    assert not train & held


def test_every_heldout_pinyin_form_has_two_syllables_so_it_marks_a_name():
    # a run of two syllables seldom shows by chance in another name; one syllable would
    for forms in HELDOUT.pinyin.values():
        assert all("_" in f for f in forms), forms


def test_no_training_pinyin_form_holds_a_heldout_form():
    # such a form could never be used: every name holding it reads as held-out
    for form in pinyin_forms(TRAIN):
        assert not has_form(form, pinyin_forms(HELDOUT)), form


def test_has_form_finds_a_run_of_syllables_only():
    forms = frozenset({("bei", "huo")})
    assert has_form(["check", "bei", "huo"], forms)
    assert not has_form(["bei", "check", "huo"], forms)
    assert not has_form(["bei"], forms)


def test_the_training_pool_writes_every_heldout_case_style():
    # the held-out pool is told apart by its words, never by a spelling training never shows
    assert set(HELDOUT.case_styles) <= set(TRAIN.case_styles)


def test_affixes_and_templates_are_disjoint():
    for field in ("prefixes", "suffixes", "version_tags", "headings", "separators"):
        assert not set(getattr(TRAIN, field)) & set(getattr(HELDOUT, field)), field
    assert not pool_templates(TRAIN) & pool_templates(HELDOUT)
    for kind in TRAIN.describe:
        for lang in ("zh", "en"):
            assert not set(TRAIN.describe[kind][lang]) & set(HELDOUT.describe[kind][lang])
    for lang in ("zh", "en"):
        assert not set(TRAIN.hook_messages[lang]) & set(HELDOUT.hook_messages[lang])
        assert not set(TRAIN.section_wrappers[lang]) & set(HELDOUT.section_wrappers[lang])


def test_the_training_pool_avoids_every_heldout_word():
    assert TRAIN.avoid == HELDOUT_WORDS and TRAIN.avoid_forms == HELDOUT_FORMS
    assert not HELDOUT.avoid and not HELDOUT.avoid_forms
    assert HELDOUT.marks == HELDOUT_WORDS and HELDOUT.mark_forms == HELDOUT_FORMS
    assert not TRAIN.marks and not TRAIN.mark_forms


@pytest.mark.parametrize("p", [TRAIN, HELDOUT], ids=["train", "heldout"])
def test_templates_keep_their_placeholders(p):
    assert all("{title}" in h for h in p.headings)
    for lang in ("zh", "en"):
        assert all({"{name}", "{description}", "{tools}"} <= set(_ph(t))
                   for t in p.skill_items[lang])
        assert all({"{name}", "{description}"} <= set(_ph(t)) for t in p.tool_items[lang])
        assert all("{body}" in w for w in p.section_wrappers[lang])
        assert all("{message}" in m for m in p.hook_messages[lang])
    assert all("{text}" in t for by_lang in p.describe.values() for ts in by_lang.values()
               for t in ts)


def _ph(template: str) -> list[str]:
    import re
    return re.findall(r"\{[a-z]+\}", template)


@pytest.mark.parametrize("p", [TRAIN, HELDOUT], ids=["train", "heldout"])
def test_every_pool_form_is_an_identifier_piece(p):
    forms = [f for opts in p.synonyms.values() for f in opts]
    forms += [f for opts in p.pinyin.values() for f in opts]
    assert all(IDENTIFIER.match(f) for f in forms)


def test_example_harness_names_are_not_heldout():
    names = set().union(*(all_names(h) for h in HARNESSES.values()))
    assert not [n for n in names if name_is_heldout(n)]


def test_unknown_pool_lists_the_valid_ones():
    with pytest.raises(ConfigError, match="valid: train, heldout"):
        pool("test")
