"""`augment(harness, rng, config) -> Variant`: one surface variant of a harness.

    import random
    from hat_core.hsa import HsaConfig, augment
    v = augment(harness, random.Random(7), HsaConfig())
    v.harness, v.rename_map, v.transforms

Each enabled transform runs with probability `weight` (at least `min_transforms` run; then
the heaviest missing ones are added), in the fixed order of `hat_core.hsa.config.TRANSFORMS`:
describe, hooks, prompt_template, rename_tools, rename_skills, rename_params, reorder,
distractors. The variant's language (for headings, item formats, wording templates and
distractor descriptions) is the prompt's own, or the other of zh/en with probability
`language_switch`. Every variant is re-validated like a loaded file. Pure and seeded: the
same `rng` state, harness and config give the same variant.
"""

from __future__ import annotations

import hashlib
import random

from hat_core.harness.io import harness_from_data
from hat_core.harness.model import Harness
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.describe import Paraphraser, TemplateParaphraser, describe
from hat_core.hsa.distractors import add_distractors
from hat_core.hsa.hooks import vary_hooks
from hat_core.hsa.prompt_template import retemplate
from hat_core.hsa.rename import rename
from hat_core.hsa.reorder import reorder
from hat_core.hsa.variant import RenameMap, Variant
from hat_core.hsa.vocab import pool as get_pool

RENAME_KINDS = {"rename_tools": "tools", "rename_skills": "skills", "rename_params": "params"}


def augment(harness: Harness, rng: random.Random, config: HsaConfig | None = None, *,
            paraphraser: Paraphraser | None = None, seed: int | None = None) -> Variant:
    """One variant: same semantics as `harness`, new surface (see the module docstring)."""
    config = config or HsaConfig()
    pool = get_pool(config.pool)
    chosen = choose_transforms(rng, config)
    language = variant_language(harness, rng, config)
    paraphraser = paraphraser or TemplateParaphraser(pool)
    h, rmap, distractors = harness, RenameMap(), ()
    if "describe" in chosen:
        h = describe(h, rng, config, paraphraser, language)
    if "hooks" in chosen:
        h = vary_hooks(h, rng, pool, config, language)
    if "prompt_template" in chosen:
        h = retemplate(h, rng, pool, config, language)
    kinds = tuple(RENAME_KINDS[n] for n in chosen if n in RENAME_KINDS)
    if kinds:
        h, rmap = rename(h, rng, pool, config, kinds)
    if "reorder" in chosen:
        h = reorder(h, rng, config)
    if "distractors" in chosen:
        h, distractors = add_distractors(h, rng, pool, config, language)
    h = harness_from_data(h.model_dump(mode="json"), source="<hsa variant>")
    return Variant(harness=h, rename_map=rmap, transforms=chosen, seed=seed, pool=config.pool,
                   distractors=distractors)


def augment_many(harness: Harness, n: int, seed: int, config: HsaConfig | None = None, *,
                 paraphraser: Paraphraser | None = None) -> list[Variant]:
    """`n` variants; variant i uses `random.Random(variant_seed(seed, i, config.pool))`."""
    pool = (config or HsaConfig()).pool
    out = []
    for i in range(n):
        s = variant_seed(seed, i, pool)
        out.append(augment(harness, random.Random(s), config, paraphraser=paraphraser, seed=s))
    return out


def variant_seed(seed: int, index: int, pool: str = "train") -> int:
    """A 63-bit seed for variant `index` of a run seeded with `seed`, drawing from `pool`.

    The pool is part of the seed: training variants of seed 0 and held-out variants of
    seed 0 must not draw the same transform sets in the same order."""
    digest = hashlib.sha256(f"hsa:{pool}:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def choose_transforms(rng: random.Random, config: HsaConfig) -> tuple[str, ...]:
    """The transforms one variant receives, in pipeline order."""
    active = config.active()
    chosen = {n for n in active if rng.random() < config.transforms[n].weight}
    by_weight = sorted(active, key=lambda n: -config.transforms[n].weight)
    for name in by_weight:
        if len(chosen) >= min(config.min_transforms, len(active)):
            break
        chosen.add(name)
    return tuple(n for n in active if n in chosen)


def variant_language(harness: Harness, rng: random.Random, config: HsaConfig) -> str:
    """"zh" or "en": the prompt's language, switched with probability `language_switch`."""
    own = "zh" if harness.prompt.language.lower().startswith("zh") else "en"
    if rng.random() < config.p("language_switch"):
        return "en" if own == "zh" else "zh"
    return own
