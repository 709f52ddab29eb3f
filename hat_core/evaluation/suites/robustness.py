"""Tool Robustness and Prompt Robustness: the T1 scenarios under one kind of change at a time.

    r = ToolRobustnessSuite().run(policy, harness, episodes=30, variants=2, seed=0)
    r.metrics  # {"score": mean over families, "renamed": ..., "reordered": ..., ...}

Each family is `variants` held-out-pool variants that change one thing:

| suite | family | change |
|---|---|---|
| tool_robustness | renamed | tool and parameter names (`rename_tools`, `rename_params`) |
| | reordered | skills, tools, tool lists, parameters (`reorder`) |
| | distractors | extra plausible tools no skill uses (`distractors`) |
| | redescribed | tool, parameter and skill descriptions (`describe`) |
| prompt_robustness | retemplated | headings, items, section order, titles (`prompt_template`) |
| | reworded_rules | the rules: list markers, a lead sentence, phrase swaps |
| | language_switch | headings and wording in the other language (zh <-> en) |

`score` is the mean of the families' pass rates (each family weighs the same). HSA itself
never rewords the rules (the diff calls that semantic); `reword_rules` does it here, for
evaluation only, keeping every rule, number, quoted word and `{placeholder}`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hat_core.data.rollout import Surface
from hat_core.diff.prompt import RULE_SECTION_IDS
from hat_core.evaluation.badcases import BadCaseSink, report_bad_cases
from hat_core.evaluation.cases import (
    CaseOutcome,
    Progress,
    cap,
    eval_world,
    original_surface,
    pass_rate,
    play_cases,
    variant_surfaces,
)
from hat_core.evaluation.policy import as_policy
from hat_core.evaluation.suites.base import SuiteResult
from hat_core.evaluation.suites.qa import need_harness, qa_result
from hat_core.harness.io import harness_from_data
from hat_core.harness.model import Harness
from hat_core.hsa.config import HsaConfig
from hat_core.inference.protocol import InferenceBackend
from hat_core.sim.judge import Judge
from hat_core.sim.policy import Policy
from hat_core.sim.runner import MAX_STEPS

Family = Callable[[Harness, int, int], list[Surface]]  # (harness, n, seed) -> surfaces


def hsa_family(*transforms: str, language_switch: float | None = None) -> Family:
    """Surfaces from held-out-pool HSA with exactly `transforms` enabled."""
    config = HsaConfig(pool="heldout").only(*transforms)
    if language_switch is not None:
        config = replace(config, probabilities={**config.probabilities,
                                                "language_switch": language_switch})

    def make(harness: Harness, n: int, seed: int) -> list[Surface]:
        return variant_surfaces(harness, n, seed, config)
    return make


RULE_LEADS = {"zh": ("请始终遵守以下要求：", "直播中务必做到以下几点：",
                     "下列规则任何时候都适用："),
              "en": ("Always follow these rules:", "These rules apply at all times:")}
RULE_MARKERS = ("- {n}) ", "（{n}）", "第{n}条：", "• ")
RULE_SWAPS = (("不使用", "禁止使用"), ("不宣称", "不得宣称"), ("必须来自", "一律来自"),
              ("不得编造", "严禁编造"), ("转人工处理", "交给人工处理"))


def reword_rules(harness: Harness, rng: random.Random) -> Harness:
    """The harness with its rules section reworded (same rules; see module doc)."""
    data = harness.model_dump(mode="json")
    language = "zh" if harness.prompt.language.lower().startswith("zh") else "en"
    for section in data["prompt"]["sections"]:
        if section["id"] in RULE_SECTION_IDS:
            section["body"] = _reword(section["body"], rng, language)
    return harness_from_data(data, source="<reworded rules>")


def _reword(body: str, rng: random.Random, language: str) -> str:
    marker = rng.choice(RULE_MARKERS)
    lines = []
    for line in body.splitlines():
        head, dot, rest = line.partition(". ")
        if dot and head.strip().isdigit():
            line = marker.format(n=head.strip()) + rest
        for old, new in RULE_SWAPS:
            if old in line and rng.random() < 0.7:
                line = line.replace(old, new)
        lines.append(line)
    return rng.choice(RULE_LEADS[language]) + "\n" + "\n".join(lines)


def reworded_rules_family(harness: Harness, n: int, seed: int) -> list[Surface]:
    base = original_surface(harness)
    return [Surface(f"r{i:03d}", "eval", reword_rules(harness, random.Random(f"rules:{seed}:{i}")),
                    base.binding_map) for i in range(n)]


TOOL_FAMILIES: dict[str, Family] = {
    "renamed": hsa_family("rename_tools", "rename_params"),
    "reordered": hsa_family("reorder"),
    "distractors": hsa_family("distractors"),
    "redescribed": hsa_family("describe"),
}
PROMPT_FAMILIES: dict[str, Family] = {
    "retemplated": hsa_family("prompt_template", language_switch=0.0),
    "reworded_rules": reworded_rules_family,
    "language_switch": hsa_family("prompt_template", language_switch=1.0),
}


@dataclass(frozen=True)
class RobustnessSuite:
    """The T1 scenarios under each family's variants; `score` = mean family pass rate."""

    name: str
    families: dict[str, Family]

    def run(self, model: Policy | InferenceBackend, harness: Harness | None, *,
            episodes: int = 30, variants: int = 2, seed: int = 0, max_steps: int = MAX_STEPS,
            max_tokens: int = 512, progress: Progress | None = None,
            bad_cases: BadCaseSink | None = None, limit: int | None = None,
            judge: Judge | None = None) -> SuiteResult:
        h = need_harness(self.name, harness)
        episodes = cap(episodes, limit)
        policy = as_policy(model, max_tokens=max_tokens)
        catalog, scenarios = eval_world(seed, episodes)
        plans = [(name, make(h, variants, _family_seed(seed, k)))
                 for k, (name, make) in enumerate(self.families.items())]
        total = sum(len(s) for _, s in plans) * len(scenarios)
        outcomes: list[CaseOutcome] = []
        by_family = {}
        for name, surfaces in plans:
            played = play_cases(self.name, surfaces, scenarios, catalog, policy, group=name,
                                max_steps=max_steps, progress=progress, done=len(outcomes),
                                total=total, judge=judge)
            by_family[name] = pass_rate(played)
            outcomes += played
        report_bad_cases(outcomes, bad_cases)
        score = sum(by_family.values()) / len(by_family)
        return qa_result(self.name, outcomes, {"score": score, **by_family},
                         {"seed": seed, "world": "hat-eval", "families": family_summary(
                             plans, outcomes)})


def _family_seed(seed: int, index: int) -> int:
    return seed * 1009 + 7919 * (index + 1)


def family_summary(plans: Sequence[tuple[str, list[Surface]]],
                   outcomes: Sequence[CaseOutcome]) -> dict:
    return {name: {"variants": [s.variant_id for s in surfaces],
                   "pass_rate": pass_rate([o for o in outcomes if o.group == name])}
            for name, surfaces in plans}


def tool_robustness() -> RobustnessSuite:
    return RobustnessSuite("tool_robustness", TOOL_FAMILIES)


def prompt_robustness() -> RobustnessSuite:
    return RobustnessSuite("prompt_robustness", PROMPT_FAMILIES)
