"""Which pool a variant's surface came from: `uses_heldout(variant)` and `uses_train(variant)`.

A name is held-out when one of its words is a held-out English word or affix
(`HELDOUT_WORDS`), or when a held-out pinyin form (`HELDOUT_FORMS`, e.g. `bei_huo`) appears in
it as a run of syllables; the training pool rejects every name holding either, and the held-out
pool only makes names that hold one. Case styles are no evidence: both pools write kebab and
SCREAMING names. Only what HSA introduced is inspected: new names from the rename map, the
distractor tools, the prompt style and the section titles.
"""

from __future__ import annotations

from hat_core.hsa.names import words
from hat_core.hsa.variant import Variant
from hat_core.hsa.vocab import HELDOUT, Pool, english_words, has_form, pinyin_forms


def pool_templates(pool: Pool) -> frozenset[str]:
    """Every prompt heading, item format, separator and section title of a pool."""
    items = [t for group in (pool.skill_items, pool.tool_items) for ts in group.values()
             for t in ts]
    titles = [t for by_lang in pool.section_titles.values() for ts in by_lang.values()
              for t in ts]
    return frozenset([*pool.headings, *items, *pool.separators, *titles])


HELDOUT_WORDS = english_words(HELDOUT)
HELDOUT_FORMS = pinyin_forms(HELDOUT)
HELDOUT_TEMPLATES = pool_templates(HELDOUT)


def name_is_heldout(name: str) -> bool:
    """Whether a name holds a held-out word or a held-out pinyin form."""
    found = words(name)
    return bool(set(found) & HELDOUT_WORDS) or has_form(found, HELDOUT_FORMS)


def introduced_names(variant: Variant) -> list[str]:
    """The names HSA gave this variant: renamed skills, tools, parameters and distractors."""
    rm = variant.rename_map
    names = [new for _, new in rm.tools.values()] + [new for _, new in rm.skills.values()]
    names += [new for m in rm.params.values() for new in m.values()]
    distractors = set(variant.distractors)
    names += [t.name for t in variant.harness.tools if t.id in distractors]
    return names


def introduced_templates(variant: Variant) -> list[str]:
    """The prompt style fields and section titles of the variant."""
    style = variant.harness.prompt.style
    titles = [s.title for s in variant.harness.prompt.sections]
    return [style.heading, style.skill_item, style.tool_item, style.separator, *titles]


def uses_heldout(variant: Variant) -> bool:
    """Whether any introduced name or template comes from the held-out pool."""
    return (any(name_is_heldout(n) for n in introduced_names(variant))
            or any(t in HELDOUT_TEMPLATES for t in introduced_templates(variant)))


def uses_train(variant: Variant) -> bool:
    """Whether any introduced name is a training-pool name (not held-out styled or worded)."""
    return any(not name_is_heldout(n) for n in introduced_names(variant))
