"""`RetrainConfig`: what one retrain job reads, typed and validated up front.

`examples/configs/retrain_tiny.yaml` is the embedded default (tiny base model, CPU);
`retrain_gpu.yaml` a production-sized one. The file (and the gates file it names) is read and
typed by `hat_core.config_file` (no empty file, size, depth and alias limits); unknown keys,
wrong types and bad values are reported together as a `ConfigError` that lists the valid keys.
Stage sections (`data`, `sft`, `opd`, `rl`) are handed to the stage's own config loader
unchanged.

    config = load_retrain_config("examples/configs/retrain_tiny.yaml")
    config.gates.t1_tolerance, config.eval.suites, config.config_hash()

`eval.render_profile` is the prompt layout the suites render (the one the model was trained
on); `eval.constrain_tools` holds the evaluated model's tool calls to the harness's tools.
`eval.judge` (`rule` by default, or `llm` with `judge_model`, `judge_base_url` defaulting to
`HAT_TEACHER_ENDPOINT`, `judge_source`) names the judge of the simulator suites; the flow
consults the judge gate before an LLM judge is used (`flows/retrain.py`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from db.job_retries import RetryPolicy
from hat_core.config_file import build_config, read_mapping
from hat_core.errors import ConfigError, Problem
from hat_core.evaluation.judging import CALIBRATION_SOURCES, JUDGE_KINDS, JudgeConfig
from hat_core.harness.render import PROFILES
from hat_core.release.gates import GateConfig, gate_config_from_dict, load_gate_config

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = ROOT / "examples" / "configs" / "retrain_tiny.yaml"


@dataclass(frozen=True)
class EvalSettings:
    """Suites for the candidate/champion side-by-side, and the zero-shot check's suites."""

    suites: tuple[str, ...] = ("t1", "t2", "ifeval")
    zero_shot_suites: tuple[str, ...] = ("t1", "t2")
    episodes: int = 30  # simulator scenarios per suite
    new_cases: int = 30  # `new` suite: cases of the kinds the version adds over its parent
    variants: int = 4  # held-out HSA variants for t2
    limit: int | None = None  # caps episodes and IFEval items (None: no cap)
    max_tokens: int = 256
    seed: int = 0
    # the prompt layout the suites render (hat_core.harness.render.PROFILES): the one the
    # model was trained on (`data.render_profile`), e.g. `compact` for the toy bases
    render_profile: str = "full"
    # tool-call names and argument keys held to the harness's tools while decoding
    # (`hat_core.inference.constrained`, docs/evaluation.md "Constrained tool calls")
    constrain_tools: bool = False
    # torch threads while the suites play (then put back; None: as the process has them). On
    # a CPU beside another busy process, 1: decoding a small model gains little from a second
    # thread and loses 3x when that thread must share a core (hat_core/cpu.py)
    num_threads: int | None = None
    # a local model plays this many cases side by side, their turns answered in one batch
    # (`hat_core.inference.batching`: T1 1.7x and IFEval 3.3x faster at 8 on one CPU core,
    # docs/evaluation.md "Batched cases"); 1: one case at a time, exactly as before
    batch_size: int = 8
    judge: str = "rule"  # or llm: only when the judge gate passes (docs/operations.md)
    judge_base_url: str | None = None  # llm: default HAT_TEACHER_ENDPOINT
    judge_model: str | None = None
    judge_api_key_env: str | None = None
    judge_source: str = "bad_cases"  # the calibration the gate reads: bad_cases or pairwise

    def judge_config(self, default_url: str | None = None) -> JudgeConfig:
        """The judge of the simulator suites (`hat_core.evaluation.judging`)."""
        return JudgeConfig(kind=self.judge, base_url=self.judge_base_url or default_url,
                           model=self.judge_model, api_key_env=self.judge_api_key_env,
                           source=self.judge_source)


@dataclass(frozen=True)
class LatencySettings:
    """The latency check: a gate profile (`hat_core.latency.profiles.PROFILES`) and load."""

    profile: str = "cpu-tiny"
    requests: int = 5
    concurrency: tuple[int, ...] = (1,)
    max_tokens: int = 64


@dataclass(frozen=True)
class WarmStart:
    """Retrain from the live champion instead of the base model (continuous retraining): the
    candidate's SFT starts from the champion's weights, with `sft` overriding the `sft`
    section (typically fewer steps); OPD's teacher stays the pre-SFT base. Without a champion
    (the first job) the candidate starts from the base as usual. Off by default."""

    enabled: bool = False
    sft: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RetrainConfig:
    """One retrain job: base model, stage configs, evaluation, latency, gates, registry."""

    base_model: str | None = None  # a model directory; None: the embedded base (built, cached)
    base_size: str = "tiny"
    base_seed: int = 0
    data: dict[str, Any] = field(default_factory=dict)
    sft: dict[str, Any] = field(default_factory=dict)
    opd: dict[str, Any] = field(default_factory=dict)
    rl: dict[str, Any] = field(default_factory=dict)
    warm_start: WarmStart = field(default_factory=WarmStart)
    eval: EvalSettings = field(default_factory=EvalSettings)
    latency: LatencySettings = field(default_factory=LatencySettings)
    gates: GateConfig = field(default_factory=GateConfig)
    registry_name: str = "hat-agent"
    job_lease_s: float = 120.0
    train_slot: str = "train-slot"
    resume: RetryPolicy = field(default_factory=RetryPolicy)  # interrupted jobs (db/job_retries)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def config_hash(self) -> str:
        """sha256 of the canonical JSON of the whole config (keys stage caches)."""
        text = json.dumps(self.to_dict(), sort_keys=True, default=list)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_retrain_config(path: str | Path | None = None) -> RetrainConfig:
    """Read a retrain config YAML (default: the embedded tiny one) and the gates file it
    names; `ConfigError` naming the file for anything unreadable or invalid."""
    path = Path(path) if path else DEFAULT_CONFIG
    data = read_mapping(path, what="retrain config")
    return retrain_config_from_dict(data, base_dir=path.parent, where=str(path))


def retrain_config_from_dict(
    data: Mapping[str, Any], base_dir: Path = ROOT, where: str = "retrain"
) -> RetrainConfig:
    """A `RetrainConfig` from a mapping; `gates` may be a mapping or a YAML path relative
    to `base_dir`. Every problem, the gates' included, in one `ConfigError`."""
    problems: list[Problem] = []
    if isinstance(data, Mapping) and isinstance(data.get("gates"), str | Mapping):
        data = {**data, "gates": _gates(data["gates"], base_dir, problems, where)}
    return build_config(RetrainConfig, data, kind="retrain", source=where, prefix=where,
                        checks=lambda config: problems + _scalar_problems(config, where))


def _gates(value: str | Mapping, base_dir: Path, problems: list[Problem],
           where: str) -> GateConfig:
    try:
        if isinstance(value, str):
            return load_gate_config(base_dir / value)
        return gate_config_from_dict(value, where=f"{where}.gates")
    except ConfigError as exc:
        problems += exc.problems or [Problem(f"{where}.gates", str(exc))]
        return GateConfig()


def _scalar_problems(config: RetrainConfig, where: str) -> list[Problem]:
    problems = []
    if config.job_lease_s <= 0:
        problems.append(Problem(f"{where}.job_lease_s",
                                f"must be > 0 seconds, got {config.job_lease_s!r}"))
    if config.resume.max_attempts < 1 or config.resume.backoff_s < 0:
        problems.append(Problem(f"{where}.resume", "max_attempts must be >= 1 and backoff_s "
                                f">= 0, got {config.resume!r}"))
    if not config.registry_name.strip():
        problems.append(Problem(f"{where}.registry_name", "must be a non-empty name"))
    if config.eval.num_threads is not None and config.eval.num_threads < 1:  # an int already
        problems.append(Problem(f"{where}.eval.num_threads", "must be >= 1 (or absent), got "
                                f"{config.eval.num_threads!r}"))
    if config.eval.batch_size < 1:
        problems.append(Problem(f"{where}.eval.batch_size",
                                f"must be >= 1, got {config.eval.batch_size!r}"))
    if config.eval.render_profile not in PROFILES:
        problems.append(Problem(f"{where}.eval.render_profile",
                                f"unknown render profile {config.eval.render_profile!r}; "
                                f"valid: {', '.join(PROFILES)}"))
    trained = config.data.get("render_profile") if isinstance(config.data, Mapping) else None
    if trained is not None and trained != config.eval.render_profile:
        problems.append(Problem(f"{where}.eval.render_profile",
                                f"{config.eval.render_profile!r}, but the data is rendered "
                                f"{trained!r} (data.render_profile): the gates would score "
                                "the model on a prompt layout it was not trained on"))
    return problems + _judge_problems(config.eval, f"{where}.eval")


def _judge_problems(ev: EvalSettings, where: str) -> list[Problem]:
    """The judge keys of the eval section (the endpoint may come from HAT_TEACHER_ENDPOINT)."""
    if ev.judge not in JUDGE_KINDS:
        return [Problem(f"{where}.judge", f"unknown judge {ev.judge!r}; valid: "
                        + ", ".join(JUDGE_KINDS))]
    out = []
    if ev.judge == "llm" and not ev.judge_model:
        out.append(Problem(f"{where}.judge_model", "the llm judge needs the model name at "
                           "its endpoint (judge_base_url, default HAT_TEACHER_ENDPOINT)"))
    if ev.judge_source not in CALIBRATION_SOURCES:
        out.append(Problem(f"{where}.judge_source", f"unknown calibration source "
                           f"{ev.judge_source!r}; valid: " + ", ".join(CALIBRATION_SOURCES)))
    return out
