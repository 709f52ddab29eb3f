"""Reorder skills, tools, each skill's tool list and each tool's parameters.

Order is surface: the diff reports it as `reordered`, and the simulator binds by id. Hooks
are never reordered (the first hook that fires at an event wins) and neither are prompt
sections here (`hat_core.hsa.prompt_template` owns those).
"""

from __future__ import annotations

import random

from hat_core.harness.model import Harness
from hat_core.hsa.config import HsaConfig


def reorder(harness: Harness, rng: random.Random, config: HsaConfig) -> Harness:
    """A copy with skills, tools, skill tool lists and (some) parameter orders shuffled."""
    data = harness.model_dump(mode="json")
    rng.shuffle(data["skills"])
    rng.shuffle(data["tools"])
    for skill in data["skills"]:
        rng.shuffle(skill["tools"])
    for tool in data["tools"]:
        if rng.random() < config.p("reorder_params"):
            tool["parameters"] = shuffled_params(tool["parameters"], rng)
    return Harness.model_validate(data)


def shuffled_params(schema: dict, rng: random.Random) -> dict:
    """The schema with its properties in a new order; `required` follows that order."""
    names = list(schema.get("properties", {}))
    rng.shuffle(names)
    out = dict(schema)
    out["properties"] = {n: schema["properties"][n] for n in names}
    if "required" in schema:
        required = set(schema["required"])
        out["required"] = [n for n in names if n in required]
    return out
