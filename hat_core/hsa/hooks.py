"""Vary what hooks say: the wording and retry format of `block_retry` and `handoff` messages.

Only the message text changes; the event, the condition (words, patterns, limits) and the
action type never do, and neither does a `rewrite` replacement (it is what the reply says).
"""

from __future__ import annotations

import random

from hat_core.harness.model import Harness
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.vocab import Pool


def vary_hooks(harness: Harness, rng: random.Random, pool: Pool, config: HsaConfig,
               language: str = "zh") -> Harness:
    """A copy with some hook messages re-framed by the pool's message templates."""
    data = harness.model_dump(mode="json")
    templates = pool.hook_messages[language]
    for hook in data["hooks"]:
        action = hook["action"]
        if "message" in action and action["message"] and rng.random() < config.p("hook_message"):
            action["message"] = rng.choice(templates).replace("{message}", action["message"])
    return Harness.model_validate(data)
