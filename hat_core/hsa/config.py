"""`HsaConfig`: which HSA transforms run, how often, and from which pool.

Defaults < YAML (`load_config`) < explicit `replace(...)`. A YAML file looks like

    pool: train                 # or heldout (evaluation only)
    transforms:                 # any subset; weight = chance a variant gets the transform
      rename_tools: {enabled: true, weight: 0.9}
      distractors: {enabled: false}
    probabilities:              # any subset of PROBABILITIES
      pinyin: 0.3
    max_distractors: 3
    min_transforms: 1

The file is read and typed by `hat_core.config_file` (no empty file, size, depth and alias
limits). Every error (unknown key, wrong type, bad value) is reported at once as a
`ConfigError` listing the valid keys.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from hat_core.config_file import MERGE, build_config, read_mapping
from hat_core.errors import ConfigError, Problem
from hat_core.hsa.names import NameOdds
from hat_core.hsa.vocab import POOLS

# In the order `augment` applies them.
TRANSFORMS = ("describe", "hooks", "prompt_template", "rename_tools", "rename_skills",
              "rename_params", "reorder", "distractors")
DEFAULT_WEIGHTS = {"describe": 0.6, "hooks": 0.5, "prompt_template": 0.6, "rename_tools": 0.8,
                   "rename_skills": 0.6, "rename_params": 0.6, "reorder": 0.6,
                   "distractors": 0.3}
PROBABILITIES = {
    "rename_element": "chance one tool/skill/parameter is renamed when its transform runs",
    "synonym": "chance a name word is replaced by a pool synonym",
    "pinyin": "chance a new name is built from pinyin words",
    "affix": "chance a new name gets a prefix, suffix or version tag",
    "opaque": "chance a new name is random letters (training pool only)",
    "shared_lead": "chance a variant's renamed tools all start with one word (a verb or namespace)",
    "redescribe_text": "chance one description/instruction is reworded",
    "language_switch": "chance headings and wording switch language (zh <-> en)",
    "shuffle_sections": "chance the prompt sections are reordered",
    "section_wording": "chance one non-rules section body gets a wording wrapper",
    "hook_message": "chance one hook message is reworded",
    "reorder_params": "chance one tool's parameters are reordered",
}


@dataclass(frozen=True)
class TransformConfig:
    """One transform: switched on or off, and the chance a variant receives it."""

    enabled: bool = True
    weight: float = 0.5


def _default_transforms() -> dict[str, TransformConfig]:
    return {name: TransformConfig(True, DEFAULT_WEIGHTS[name]) for name in TRANSFORMS}


def _default_probabilities() -> dict[str, float]:
    return {"rename_element": 0.8, "synonym": 0.7, "pinyin": 0.25, "affix": 0.3,
            "opaque": 0.5, "shared_lead": 0.0, "redescribe_text": 0.6, "language_switch": 0.3,
            "shuffle_sections": 0.5, "section_wording": 0.4, "hook_message": 0.7,
            "reorder_params": 0.5}


@dataclass(frozen=True)
class HsaConfig:
    """The whole HSA configuration (see the module docstring for the YAML form)."""

    pool: str = "train"
    transforms: Mapping[str, TransformConfig] = field(default_factory=_default_transforms,
                                                      metadata=MERGE)
    probabilities: Mapping[str, float] = field(default_factory=_default_probabilities,
                                               metadata=MERGE)
    max_distractors: int = 3
    min_transforms: int = 1

    def __post_init__(self) -> None:
        problems = _check(self)
        if problems:
            raise ConfigError(f"invalid HSA config ({len(problems)} problems)", problems)

    def p(self, name: str) -> float:
        """The probability called `name` (one of `PROBABILITIES`)."""
        return self.probabilities[name]

    def active(self) -> tuple[str, ...]:
        """The enabled transforms with a positive weight, in pipeline order."""
        return tuple(n for n in TRANSFORMS
                     if self.transforms[n].enabled and self.transforms[n].weight > 0)

    def odds(self) -> NameOdds:
        """The per-name probabilities for `hat_core.hsa.names.new_name`."""
        return NameOdds(synonym=self.p("synonym"), pinyin=self.p("pinyin"),
                        affix=self.p("affix"), opaque=self.p("opaque"))

    def with_weights(self, weights: Mapping[str, float]) -> HsaConfig:
        """A copy with some transform weights replaced (enabled flags kept)."""
        merged = {n: replace(t, weight=weights.get(n, t.weight))
                  for n, t in self.transforms.items()}
        return replace(self, transforms=merged)

    def only(self, *names: str) -> HsaConfig:
        """A copy in which exactly `names` are enabled, each with weight 1."""
        return replace(self, transforms={n: TransformConfig(n in names, 1.0) for n in TRANSFORMS},
                       min_transforms=0)

    def to_dict(self) -> dict:
        return {"pool": self.pool,
                "transforms": {n: asdict(t) for n, t in self.transforms.items()},
                "probabilities": dict(self.probabilities),
                "max_distractors": self.max_distractors, "min_transforms": self.min_transforms}

    def content_hash(self) -> str:
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


def load_config(path: str | Path) -> HsaConfig:
    """Read an HSA config from YAML (ConfigError listing every problem)."""
    return config_from_data(read_mapping(path, what="HSA config"), source=str(path))


def config_from_data(data: Any, *, source: str = "<config>") -> HsaConfig:
    """Build an `HsaConfig` from parsed YAML/JSON over the defaults: a transform or
    probability given is merged onto its default; `HsaConfig` checks the values."""
    return build_config(HsaConfig, data, kind="HSA", source=source)


def _check(cfg: HsaConfig) -> list[Problem]:
    problems = []
    if cfg.pool not in POOLS:
        problems.append(Problem("pool", f"unknown pool {cfg.pool!r}; valid: {', '.join(POOLS)}"))
    for name in TRANSFORMS:
        t = cfg.transforms.get(name)
        if not isinstance(t, TransformConfig):
            problems.append(Problem(f"transforms.{name}", "missing"))
            continue
        if not isinstance(t.enabled, bool):
            problems.append(Problem(f"transforms.{name}.enabled", "must be true or false"))
        if not _is_prob(t.weight):
            problems.append(Problem(f"transforms.{name}.weight", "must be a number in [0, 1]"))
    for name in PROBABILITIES:
        if not _is_prob(cfg.probabilities.get(name)):
            problems.append(Problem(f"probabilities.{name}", "must be a number in [0, 1]"))
    for name in ("max_distractors", "min_transforms"):
        value = getattr(cfg, name)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 16:
            problems.append(Problem(name, "must be an integer in [0, 16]"))
    return problems


def _is_prob(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1
