"""The characters a word/char tokenizer must know besides its training corpus.

`coverage_chars()` collects every character of the texts the project's own stages show a
model: the simulator's worlds (catalog, scenarios, oracle replies and tool results on the
example harnesses), the HSA name and phrase pools, the project's IFEval set and the General-OPD
prompts. Only characters are taken, never words, and none of this text is trained on by the
base model: it keeps a character the base never saw from becoming `<unk>` later (a real
pretrained tokenizer covers them too). Deterministic.
"""

from __future__ import annotations

import random
from pathlib import Path

EXAMPLE_HARNESSES = Path(__file__).resolve().parents[2] / "examples" / "harnesses"


def coverage_chars() -> str:
    """Every character of the coverage texts, sorted, as one string."""
    return "".join(sorted(set("".join(coverage_texts()))))


def coverage_texts() -> list[str]:
    from hat_core.data.opd_prompts import generate_prompts
    from hat_core.evaluation.ifeval.project_set import build_set
    from hat_core.hsa.vocab import HELDOUT, TRAIN

    texts = [repr(TRAIN), repr(HELDOUT)]
    texts += [row["prompt"] for row in build_set()]
    texts += [p.prompt for p in generate_prompts(random.Random(0), 400)]
    return texts + _simulator_texts()


def _simulator_texts() -> list[str]:
    import json

    from hat_core.harness.io import load_harness
    from hat_core.harness.render import render
    from hat_core.hsa.augment import augment_many
    from hat_core.hsa.config import HsaConfig
    from hat_core.sim.batch import world
    from hat_core.sim.policy import OraclePolicy
    from hat_core.sim.runner import run_episode

    texts = []
    for seed in range(3):
        catalog, scenarios = world(seed, 60)
        texts += [repr(catalog), repr(scenarios)]
    for path in sorted(EXAMPLE_HARNESSES.glob("*.yaml")):
        harness = load_harness(path)
        surfaces = [harness] + [v.harness for pool in ("train", "heldout")
                                for v in augment_many(harness, 4, 0, HsaConfig(pool=pool))]
        for h in surfaces:
            texts.append(render(h, "full").system_prompt)
            texts.append(json.dumps(render(h, "full").tools, ensure_ascii=False))
        catalog, scenarios = world(0, 30)
        for scenario in scenarios:
            episode = run_episode(harness, scenario, catalog, OraclePolicy())
            texts.append(json.dumps(episode.messages, ensure_ascii=False))
    return texts
