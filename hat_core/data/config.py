"""`DataConfig`: everything a training-data build reads, typed and validated up front.

Defaults < YAML (`load_data_config(path)`) < command-line overrides (dotted keys,
`{"teacher.kind": "openai", "variants": 8}`), read and typed by `hat_core.config_file` (no
empty file, size, depth and alias limits). Every problem (unknown key, wrong type, bad value)
is reported at once as a `ConfigError` whose problems list the valid keys:

    seed: 0
    scenarios: 60          # scenario bank size; every scenario runs on the original + K variants
    new_kind_share: 0.25   # with a previous harness: the kinds the harness adds over it make
                           #   at least this share of the bank (built on top of `scenarios`)
    variants: 4            # K training variants from HSA (pool train)
    catalog_size: 24
    scenarios_per_surface: 0   # or n: each surface plays n of the scenarios (dealt, seeded)
    hsa: {}                # an HSA config (see docs/hsa.md); its pool is always `train` here
    teacher: {kind: oracle, slip_rate: 0.1, concurrency: 1, retries: 2, timeout_s: 60}
    rejection: {min_accuracy: 1.0, min_effectiveness: 0.75, best_of_n: 1}
    retry: {full_retry_share: 0.1}
    splits: {heldout_products: 0.1, heldout_scenarios: 0.1, validation: 0.1, heldout_variants: 4}
    validation: {min_messages: 3, max_messages: 40, ...}
    opd: {source: builtin, size: 200}
    logs: []               # real-log JSONL files imported into the build
    bad_case_copies: 2     # each reviewed bad case sent to training is played on this many
                           #   surfaces (the original, then training variants); 0: none read
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from hat_core.config_file import build_config, read_config
from hat_core.errors import ConfigError, Problem
from hat_core.harness.render import PROFILES
from hat_core.sim.replies import PLAN_STYLES

TEACHER_KINDS = ("oracle", "transformers", "openai")


@dataclass(frozen=True)
class TeacherConfig:
    """Which teacher plays the rollouts and how it is called."""

    kind: str = "oracle"
    model_dir: str | None = None  # transformers
    base_url: str | None = None  # openai
    model: str | None = None  # openai
    api_key_env: str | None = None  # name of the variable that holds the API key
    concurrency: int = 1
    retries: int = 2
    timeout_s: float = 60.0
    max_tokens: int = 512
    temperature: float = 0.0
    slip_rate: float = 0.1  # oracle: share of episodes in which it first trips a hook
    # oracle: 0 = one short sentence of reasoning per message; N = a grounded deliberation
    # of about N simulator tokens (hat_core.sim.reasoning), for the CoT length penalty
    reasoning_tokens: int = 0
    # oracle: how its one-sentence reasoning before a call names the skill and the tool:
    # "plain" (the names) or "anchored" (each quoted with its description as the prompt's
    # line writes it, `【description: name】`; hat_core.sim.replies.plan)
    plan: str = "plain"


@dataclass(frozen=True)
class RejectionConfig:
    """Keep a trajectory only when both rewards reach their thresholds."""

    min_accuracy: float = 1.0
    min_effectiveness: float = 0.75
    best_of_n: int = 1  # samples per (scenario, harness); the best passing one is kept


@dataclass(frozen=True)
class RetryConfig:
    """Of kept trajectories in which a hook forced a retry, this share keeps the full retry."""

    full_retry_share: float = 0.1


@dataclass(frozen=True)
class SplitConfig:
    """Shares of held-out products and scenarios (test only), validation share, and how many
    held-out-pool variants are written for evaluation."""

    heldout_products: float = 0.1
    heldout_scenarios: float = 0.1
    validation: float = 0.1
    heldout_variants: int = 4


@dataclass(frozen=True)
class ValidationConfig:
    """Bounds of the Great Expectations suite."""

    min_messages: int = 3
    max_messages: int = 40
    min_chars: int = 20
    max_chars: int = 16000
    max_duplicate_rate: float = 0.05
    min_skill_share: float = 0.01
    max_skill_share: float = 0.6
    min_kind_share: float = 0.001
    max_kind_share: float = 0.5
    require_all_skills: bool = True


@dataclass(frozen=True)
class OpdConfig:
    """The General-OPD prompt set: `builtin` (seeded generator) or a JSONL file / HF dir."""

    source: str = "builtin"
    size: int = 200
    languages: tuple[str, ...] = ("en", "zh")


@dataclass(frozen=True)
class DataConfig:
    """The whole build configuration (see the module docstring)."""

    seed: int = 0
    scenarios: int = 60
    variants: int = 4
    catalog_size: int = 24
    # 0: every scenario on every surface; n: n scenarios per surface (`rollout.deal`)
    scenarios_per_surface: int = 0
    hsa: Mapping[str, Any] = field(default_factory=dict)
    teacher: TeacherConfig = TeacherConfig()
    rejection: RejectionConfig = RejectionConfig()
    retry: RetryConfig = RetryConfig()
    splits: SplitConfig = SplitConfig()
    validation: ValidationConfig = ValidationConfig()
    opd: OpdConfig = OpdConfig()
    logs: tuple[str, ...] = ()
    render_profile: str = "full"  # hat_core.harness.render.PROFILES; `compact` for the toy base
    new_kind_share: float = 0.25  # share of the bank for kinds new over a previous harness
    bad_case_copies: int = 2  # surfaces each sent bad case is played on (`hat_core.data.feedback`)

    def to_dict(self) -> dict:
        data = json.loads(json.dumps(dataclasses.asdict(self), default=list))
        if data["render_profile"] == "full":  # added later: keep older content hashes
            del data["render_profile"]
        if data["scenarios_per_surface"] == 0:
            del data["scenarios_per_surface"]
        if data["teacher"]["reasoning_tokens"] == 0:
            del data["teacher"]["reasoning_tokens"]
        if data["teacher"]["plan"] == "plain":  # added later: keep older content hashes
            del data["teacher"]["plan"]
        if data["new_kind_share"] == 0.25:  # added later: keep older content hashes
            del data["new_kind_share"]
        if data["bad_case_copies"] == 2:  # added later: keep older content hashes
            del data["bad_case_copies"]
        return data

    def content_hash(self) -> str:
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


SECTIONS = {"teacher": TeacherConfig, "rejection": RejectionConfig, "retry": RetryConfig,
            "splits": SplitConfig, "validation": ValidationConfig, "opd": OpdConfig}
_SHARES = {"teacher.slip_rate", "rejection.min_accuracy", "rejection.min_effectiveness",
           "retry.full_retry_share", "splits.heldout_products", "splits.heldout_scenarios",
           "splits.validation", "validation.max_duplicate_rate", "validation.min_skill_share",
           "validation.max_skill_share", "validation.min_kind_share",
           "validation.max_kind_share"}
_POSITIVE = {"scenarios", "catalog_size", "teacher.concurrency", "teacher.max_tokens",
             "rejection.best_of_n", "opd.size", "validation.max_messages",
             "validation.max_chars"}


def load_data_config(path: str | Path | None = None,
                     overrides: Mapping[str, Any] | None = None) -> DataConfig:
    """Defaults, then the YAML file (if any), then dotted-key overrides."""
    data = read_config(path, overrides, what="data config")
    return config_from_data(data, source=str(path or "<config>"))


def config_from_data(data: Mapping[str, Any], *, source: str = "<config>") -> DataConfig:
    """Build a `DataConfig` from parsed YAML over the defaults (ConfigError on any problem)."""
    return build_config(DataConfig, data, kind="data", source=source, checks=check_config)


def check_config(config: DataConfig) -> list[Problem]:
    """Every bad value of a config (types, ranges, teacher settings)."""
    problems = []
    flat = {f.name: getattr(config, f.name) for f in fields(config) if f.name not in SECTIONS}
    for name in SECTIONS:
        section = getattr(config, name)
        flat.update({f"{name}.{f.name}": getattr(section, f.name) for f in fields(section)})
    for key, value in flat.items():
        problems += _check_value(key, value)
    problems += _check_teacher(config.teacher)
    if config.render_profile not in PROFILES:
        problems.append(Problem("render_profile", f"valid profiles: {', '.join(PROFILES)}"))
    if not 0 <= config.new_kind_share < 1:
        problems.append(Problem("new_kind_share", "must be a share in [0, 1), got "
                                f"{config.new_kind_share!r}"))
    problems += _check_paths(config)
    problems += _check_hsa(config.hsa)
    return problems


def _check_paths(config: DataConfig) -> list[Problem]:
    problems = []
    source = config.opd.source
    if source != "builtin" and not (isinstance(source, str) and source
                                    and Path(source).exists()):
        problems.append(Problem("opd.source", f"no such prompt set {source!r}; valid: "
                                "builtin, a JSONL file or an HF dataset directory"))
    for i, log in enumerate(config.logs):
        if not isinstance(log, str) or not Path(log).is_file():
            problems.append(Problem(f"logs[{i}]", f"no such log file {log!r}"))
    return problems


def _check_hsa(hsa: Any) -> list[Problem]:
    from hat_core.hsa.config import config_from_data as hsa_config

    if not isinstance(hsa, Mapping):
        return [Problem("hsa", "must be a mapping (an HSA config, see docs/hsa.md)")]
    try:
        hsa_config(dict(hsa), source="hsa")
    except ConfigError as exc:
        return [Problem(f"hsa.{p.path}", p.message) for p in exc.problems] or [
            Problem("hsa", str(exc))]
    return []


def _check_value(key: str, value: Any) -> list[Problem]:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if key in _SHARES and not (number and 0 <= value <= 1):
        return [Problem(key, f"must be a number in [0, 1], got {value!r}")]
    if key in _POSITIVE and not (isinstance(value, int) and not isinstance(value, bool)
                                 and value >= 1):
        return [Problem(key, f"must be an integer >= 1, got {value!r}")]
    if key in ("seed", "variants", "scenarios_per_surface", "bad_case_copies",
               "splits.heldout_variants", "teacher.retries", "teacher.reasoning_tokens",
               "validation.min_messages", "validation.min_chars") and not (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return [Problem(key, f"must be an integer >= 0, got {value!r}")]
    if key in ("teacher.timeout_s", "teacher.temperature") and not (number and value >= 0):
        return [Problem(key, f"must be a number >= 0, got {value!r}")]
    return []


def _check_teacher(t: TeacherConfig) -> list[Problem]:
    if t.kind not in TEACHER_KINDS:
        return [Problem("teacher.kind", f"unknown teacher {t.kind!r}; valid: "
                        + ", ".join(TEACHER_KINDS))]
    if t.plan not in PLAN_STYLES:
        return [Problem("teacher.plan", f"unknown plan style {t.plan!r}; valid: "
                        + ", ".join(PLAN_STYLES))]
    if t.kind == "transformers" and not t.model_dir:
        return [Problem("teacher.model_dir", "required for the transformers teacher")]
    if t.kind == "openai" and not (t.base_url and t.model):
        return [Problem("teacher.base_url", "base_url and model are required for openai")]
    return []
