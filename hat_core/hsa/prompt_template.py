"""Re-template the system prompt: section order, headings, item formats, titles and wording.

What changes: `PromptStyle` (heading via `{title}`, skill and tool item formats, separator),
the order of sections, the titles of known sections (by section id, in the variant's
language), and a wording wrapper around the body of non-rules sections. What never changes:
section ids, prompt variables, the set of `{placeholders}` in each body, and the body of a
rules section (`hat_core.diff.prompt.RULE_SECTION_IDS`: editing it is semantic).
"""

from __future__ import annotations

import random

from hat_core.diff.prompt import RULE_SECTION_IDS
from hat_core.harness.model import Harness, PromptStyle
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.vocab import Pool


def retemplate(harness: Harness, rng: random.Random, pool: Pool, config: HsaConfig,
               language: str = "zh") -> Harness:
    """A copy with a new prompt style, section order, titles and section wording."""
    data = harness.model_dump(mode="json")
    prompt = data["prompt"]
    prompt["style"] = new_style(rng, pool, language).model_dump()
    sections = prompt["sections"]
    if rng.random() < config.p("shuffle_sections"):
        rng.shuffle(sections)
    for section in sections:
        titles = pool.section_titles.get(section["id"], {}).get(language)
        if titles and section["title"]:
            section["title"] = rng.choice(titles)
        if section["id"] not in RULE_SECTION_IDS and rng.random() < config.p("section_wording"):
            wrapper = rng.choice(pool.section_wrappers[language])
            section["body"] = wrapper.replace("{body}", section["body"])
    return Harness.model_validate(data)


def new_style(rng: random.Random, pool: Pool, language: str) -> PromptStyle:
    """A prompt style drawn from the pool (items in `language`)."""
    return PromptStyle(
        heading=rng.choice(pool.headings),
        skill_item=rng.choice(pool.skill_items[language]),
        tool_item=rng.choice(pool.tool_items[language]),
        separator=rng.choice(pool.separators),
    )
