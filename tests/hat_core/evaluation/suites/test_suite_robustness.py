"""`tool_robustness` and `prompt_robustness`: one kind of change per family."""

from __future__ import annotations

import random
import re

from hat_core.diff.api import diff_harness
from hat_core.evaluation.suites.robustness import (
    PROMPT_FAMILIES,
    TOOL_FAMILIES,
    prompt_robustness,
    reword_rules,
    tool_robustness,
)
from hat_core.harness.render import render
from hat_core.sim.policy import MemorisingPolicy, OraclePolicy

EPISODES = 15


def test_the_oracle_is_robust_to_everything(v1_harness):
    for suite in (tool_robustness(), prompt_robustness()):
        r = suite.run(OraclePolicy(), v1_harness, episodes=EPISODES, variants=2)
        assert r.metrics["score"] == 1.0, suite.name
        assert set(r.summary["families"]) == set(suite.families)


def test_v1_names_break_only_under_renames(v1_harness):
    memorising = MemorisingPolicy(v1_harness)
    tools = tool_robustness().run(memorising, v1_harness, episodes=EPISODES, variants=2)
    assert tools.metrics["renamed"] < 0.5
    assert tools.metrics["reordered"] == tools.metrics["distractors"] == 1.0
    assert tools.metrics["redescribed"] == 1.0
    assert tools.metrics["score"] == sum(tools.metrics[f] for f in TOOL_FAMILIES) / 4
    prompts = prompt_robustness().run(memorising, v1_harness, episodes=EPISODES, variants=2)
    assert prompts.metrics["score"] == 1.0


def test_each_family_changes_only_its_own_thing(v1_harness):
    renamed = TOOL_FAMILIES["renamed"](v1_harness, 2, 0)
    assert all(set(s.variant.transforms) <= {"rename_tools", "rename_params"} for s in renamed)
    switched = PROMPT_FAMILIES["language_switch"](v1_harness, 2, 0)
    assert all(s.harness.prompt.language != v1_harness.prompt.language or
               render(s.harness).system_prompt != render(v1_harness).system_prompt
               for s in switched)
    retemplated = PROMPT_FAMILIES["retemplated"](v1_harness, 2, 0)
    assert all(s.variant.transforms == ("prompt_template",) for s in retemplated)


def test_reworded_rules_keep_every_rule(v1_harness):
    old = next(s.body for s in v1_harness.prompt.sections if s.id == "rules")
    for seed in range(5):
        new_h = reword_rules(v1_harness, random.Random(seed))
        new = next(s.body for s in new_h.prompt.sections if s.id == "rules")
        assert new != old
        assert re.findall(r"\{\w+\}", new) == re.findall(r"\{\w+\}", old)
        assert re.findall(r"\d+%|《[^》]+》", new) == re.findall(r"\d+%|《[^》]+》", old)
        changes = diff_harness(v1_harness, new_h).changes
        assert changes and all(c.path.startswith("prompt.sections") for c in changes)
