"""The training-data pipeline: rollouts -> rejection -> retry policy -> splits -> validation.

    result = build(harness, load_data_config("examples/configs/data_tiny.yaml"), Path("runs/d"))
    result.version, result.stats.kept, result.stats.rejected

Steps (each timed in `stats.timings`): real logs from `config.logs` are read first (bad rows
stop the build before any teacher call); the seed's catalog and scenario bank (plus the
scenario kinds the harness adds, e.g. `bundle` under v3: `scenario_extra`); the original
harness plus K training variants (HSA) and the held-out variants; teacher rollouts of every
scenario on every surface (best-of-n samples); rejection by Accuracy and Effectiveness; the
hook-retry policy; reviewed bad cases sent to training (`bad_cases`, `SentCase`s the caller
read from the store) replayed by the same teacher on `bad_case_copies` surfaces, through the
same rejection and retry policy (`hat_core.data.feedback`; a case that cannot be rebuilt is
skipped with a warning naming its id); the logs and `extra_trajectories` join here; exact
duplicates are dropped; splits by scenario and product; TRL rows; the Great Expectations
suite. The manifest's `bad_cases` lists the ids with rows in the dataset, their rows per
split and the skipped cases with their reasons. A failed validation writes
`validation/report.md`, a manifest with status `failed` and no dataset, then raises
`DataValidationError` (the CLI exits 2). Progress goes to `progress(step, done, total)`.

Directory layout (`out/`): `manifest.json`, `harness.yaml`, `heldout.json`,
`dataset/` (HF `DatasetDict`: train, validation, test), `heldout_variants/`, `opd/` (HF
`Dataset` of General-OPD prompts), `validation/report.md` and `report.json`.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from hat_core.data.config import DataConfig
from hat_core.data.feedback import Feedback, SentCase, feedback_summary, play_sent_cases
from hat_core.data.logs_import import import_logs, version_names
from hat_core.data.manifest import make_manifest, write_manifest
from hat_core.data.opd_prompts import opd_prompt_set, opd_rows
from hat_core.data.rejection import dedupe, select
from hat_core.data.retry_policy import apply_retry_policy
from hat_core.data.rollout import (
    Progress,
    heldout_surfaces,
    play_all,
    training_surfaces,
    trajectory_of,
    unique_scenarios,
)
from hat_core.data.splits import SPLITS, HeldOut, assign_splits, choose_heldout, harness_yaml
from hat_core.data.teacher import Teacher, make_teacher
from hat_core.data.trajectory import Trajectory, products_in
from hat_core.data.trl_rows import arrow_schema, trl_row
from hat_core.data.validate import ValidationContext, ValidationReport, validate_rows
from hat_core.errors import ConfigError, HatError, Problem
from hat_core.harness.model import Harness
from hat_core.harness.render import render_tools, use_profile
from hat_core.sim.batch import world
from hat_core.sim.binding import harness_hash
from hat_core.sim.scenarios import extra_counts, kinds_for, new_kinds


class DataValidationError(HatError):
    """A dataset that failed validation; `report_path` is the readable report."""

    def __init__(self, message: str, report: ValidationReport, report_path: Path):
        self.report_path = report_path
        self.validation = report
        super().__init__(message, [Problem(c.column, f"{c.name}: {c.observed}")
                                   for c in report.failed])


@dataclass
class BuildStats:
    rollouts: int = 0
    duplicate_scenarios: int = 0  # same ground truth as an earlier scenario: never played
    kept: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    retries: dict[str, int] = field(default_factory=dict)
    imported: int = 0
    extra: int = 0
    bad_cases: int = 0  # trajectories replayed from sent bad cases (before dedupe)
    splits: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class BuildResult:
    out: Path
    version: str
    manifest: dict
    report: ValidationReport
    stats: BuildStats


class _Timer:
    def __init__(self, stats: BuildStats, progress: Progress | None):
        self.stats, self.progress = stats, progress

    @contextmanager
    def __call__(self, step: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.stats.timings[step] = self.stats.timings.get(step, 0.0) + (
            time.perf_counter() - start)
        if self.progress is not None:
            self.progress(step, 1, 1)


def build(harness: Harness, config: DataConfig, out: Path, *, teacher: Teacher | None = None,
          extra_trajectories: Sequence[Trajectory] = (), progress: Progress | None = None,
          harness_ref: str = "", previous: Harness | None = None,
          bad_cases: Sequence[SentCase] = ()) -> BuildResult:
    """Build, validate and write a dataset directory (see the module docstring), rendering
    harnesses with `config.render_profile`. `previous`: the live version `harness` edits; the
    scenario kinds it adds make `config.new_kind_share` of the bank (`scenario_extra`).
    `bad_cases`: reviewed bad cases sent to training, replayed into the build."""
    with use_profile(config.render_profile):
        return _build(harness, config, out, teacher=teacher,
                      extra_trajectories=extra_trajectories, progress=progress,
                      harness_ref=harness_ref, previous=previous, bad_cases=bad_cases)


def scenario_extra(harness: Harness, config: DataConfig,
                   previous: Harness | None = None) -> dict[str, int]:
    """How many scenarios of each kind `harness` adds over the base kinds go after the bank
    of `config.scenarios`: one stratum's share each, and the kinds new over `previous` at
    least `config.new_kind_share` of the whole bank together (`scenarios.extra_counts`).
    A harness with only the base kinds (v1, v2): none, the bank as it always was."""
    return extra_counts(kinds_for(harness), config.scenarios, new_kinds(harness, previous),
                        config.new_kind_share)


def _build(harness: Harness, config: DataConfig, out: Path, *, teacher: Teacher | None,
           extra_trajectories: Sequence[Trajectory], progress: Progress | None,
           harness_ref: str, previous: Harness | None = None,
           bad_cases: Sequence[SentCase] = ()) -> BuildResult:
    stats = BuildStats()
    timer = _Timer(stats, progress)
    with timer("import"):  # first: bad log rows stop the build before any teacher call
        imported = _imported(harness, config, version_names(harness_ref))
        extra = [t if t.source == "extra" else _as_extra(t) for t in extra_trajectories]
        stats.imported, stats.extra = len(imported), len(extra)
    trajectories, heldout, held_variants, surfaces, fed = _generate(
        harness, config, teacher, stats, timer, progress, previous, bad_cases)
    return finish(harness, config, out, [*trajectories, *fed.trajectories, *imported, *extra],
                  heldout, held_variants, surfaces=surfaces, stats=stats, timer=timer,
                  harness_ref=harness_ref, feedback=fed)


def finish(harness: Harness, config: DataConfig, out: Path, trajectories: Sequence[Trajectory],
           heldout: HeldOut, held_variants: Sequence = (), *,
           surfaces: Sequence[Harness] = (), stats: BuildStats | None = None,
           timer: _Timer | None = None, harness_ref: str = "",
           feedback: Feedback | None = None) -> BuildResult:
    """Dedupe, split, validate and write trajectories from any source (builds and imports).

    Rows must run under `harness` or one of `surfaces` (the training variants). With
    `feedback` (a build's replayed bad cases) the manifest gets `bad_cases`."""
    stats = stats or BuildStats(kept=len(trajectories))
    timer = timer or _Timer(stats, None)
    with timer("dedupe"):
        everything, dups = dedupe(trajectories)
        stats.rejected["duplicate"] = dups
    with timer("split"):
        everything = assign_splits(everything, heldout, config.splits, config.seed)
    with timer("rows"):
        rows = _rows(everything)
        stats.splits = {s: len(rows[s]) for s in SPLITS}
        stats.kept = sum(stats.splits.values())
    with timer("validate"):
        known = surface_digests([harness, *surfaces])
        ctx = ValidationContext(heldout, tuple(s.id for s in harness.skills),
                                frozenset(t.name for t in harness.tools), config.validation,
                                known)
        report = validate_rows([r for s in SPLITS for r in rows[s]], ctx)
    with timer("write"):
        manifest = _write(out, harness, config, rows, heldout, list(held_variants), report,
                          stats, harness_ref)
        manifest["surfaces"] = known
        if feedback is not None:
            manifest["bad_cases"] = feedback_summary(rows, config.bad_case_copies,
                                                     feedback.skipped)
        write_manifest(out, manifest)
    if not report.success:
        raise DataValidationError(
            f"dataset failed validation ({len(report.failed)} checks); see "
            f"{out / 'validation' / 'report.md'}", report, out / "validation" / "report.md")
    return BuildResult(out, manifest["version"], manifest, report, stats)


def _generate(harness: Harness, config: DataConfig, teacher: Teacher | None, stats: BuildStats,
              timer: _Timer, progress: Progress | None, previous: Harness | None = None,
              bad_cases: Sequence[SentCase] = ()):
    with timer("world"):
        catalog, scenarios = world(config.seed, config.scenarios, config.catalog_size,
                                   scenario_extra(harness, config, previous))
        scenarios, stats.duplicate_scenarios = unique_scenarios(scenarios)
    with timer("augment"):
        surfaces = training_surfaces(harness, config)
        held = heldout_surfaces(harness, config)
        heldout = choose_heldout([p.id for p in catalog.products], [s.id for s in scenarios],
                                 config.splits, config.seed,
                                 [s.harness.content_hash() for s in held])
    own = teacher is None
    teacher = teacher or make_teacher(config.teacher, config.seed)
    try:
        with timer("rollout"):
            rollouts = play_all(surfaces, scenarios, catalog, teacher,
                                samples=config.rejection.best_of_n,
                                per_surface=config.scenarios_per_surface, seed=config.seed,
                                progress=progress)
        with timer("bad_cases"):
            fed = play_sent_cases(bad_cases, surfaces, teacher, config)
            stats.bad_cases = len(fed.trajectories)
    finally:
        if own:
            teacher.close()
    with timer("rejection"):
        kept, rejected = select(rollouts, config.rejection)
        dicts = {sc.id: sc.to_dict() for sc in scenarios}
        trajectories = [trajectory_of(r, teacher.name, dicts[r.scenario.id]) for r in kept]
        stats.rollouts, stats.rejected = len(rollouts), dict(rejected)
    with timer("retry_policy"):
        trajectories, stats.retries = apply_retry_policy(
            trajectories, config.retry.full_retry_share, config.seed)
    return (trajectories, heldout, [s.variant for s in held if s.variant is not None],
            [s.harness for s in surfaces], fed)


def _imported(harness: Harness, config: DataConfig, versions: list[str]) -> list[Trajectory]:
    out, problems = [], []
    for path in config.logs:
        result = import_logs(path, harness, accepted_versions=versions)
        out += result.trajectories
        problems += result.problems
    if problems:
        raise ConfigError(f"{len(problems)} bad row(s) in the log files of `logs`; "
                          "fix them or import with `hat data import`", problems)
    return out


def _as_extra(t: Trajectory) -> Trajectory:
    return replace(t, source="extra")


def tools_text(harness: Harness) -> str:
    """The `tools` column of rows that ran under `harness`: the OpenAI schemas, whatever the
    render profile (validation checks calls against them; a compact-profile SFT stage leaves
    them out of the chat template)."""
    return json.dumps(render_tools(harness), ensure_ascii=False)


def surface_digests(harnesses: Sequence[Harness]) -> dict[str, str]:
    """harness hash -> sha256 of its `tools` column text (the hash `bind(h)` carries)."""
    return {harness_hash(h): hashlib.sha256(tools_text(h).encode("utf-8")).hexdigest()
            for h in harnesses}


def _rows(trajectories: Sequence[Trajectory]) -> dict[str, list[dict]]:
    tools_json: dict[str, str] = {}
    scenario_json: dict[int, str] = {}  # by id(): trajectories of a scenario share its dict
    rows: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for t in trajectories:
        tools = tools_json.get(t.harness_hash)
        if tools is None:
            tools = tools_json[t.harness_hash] = json.dumps(list(t.tools), ensure_ascii=False)
        scenario = scenario_json.get(id(t.scenario))
        if scenario is None:
            scenario = json.dumps(t.scenario, ensure_ascii=False) if t.scenario else ""
            scenario_json[id(t.scenario)] = scenario
        rows[t.split].append(trl_row(t, tools, scenario))
    return rows


def _write(out: Path, harness: Harness, config: DataConfig, rows: dict[str, list[dict]],
           heldout: HeldOut, held_variants: list, report: ValidationReport, stats: BuildStats,
           harness_ref: str) -> dict:
    from hat_core.data.splits import write_heldout_variants

    out.mkdir(parents=True, exist_ok=True)
    for stale in ("dataset", "opd", "heldout_variants", "validation"):  # from an earlier build
        if (out / stale).exists():
            shutil.rmtree(out / stale)
    report.write(out / "validation")
    (out / "harness.yaml").write_text(harness_yaml(harness), encoding="utf-8")
    (out / "heldout.json").write_text(json.dumps(heldout.to_dict(), ensure_ascii=False,
                                                 indent=2) + "\n", encoding="utf-8")
    variants = write_heldout_variants(out / "heldout_variants", held_variants)
    manifest = make_manifest(rows, config.to_dict(), harness.content_hash(),
                             harness={"ref": harness_ref, "name": harness.harness},
                             stats=stats.to_dict(), heldout_variants=variants,
                             validation={"success": report.success,
                                         "failed": [c.name for c in report.failed],
                                         "report": "validation/report.md"})
    if report.success:
        _save_datasets(out, rows, config, manifest["version"])
        manifest["status"] = "ready"
    else:
        manifest["status"] = "failed"
    manifest["stats"] = stats.to_dict()
    write_manifest(out, manifest)
    return manifest


def _save_datasets(out: Path, rows: dict[str, list[dict]], config: DataConfig,
                   version: str) -> None:
    import datasets
    import pyarrow as pa
    from datasets import Dataset, DatasetDict

    bars = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # the library reports progress through callbacks only
    try:
        # Arrow straight from the rows with the known schema; the version is the fingerprint.
        schema = arrow_schema()
        DatasetDict({s: Dataset(pa.Table.from_pylist(r, schema=schema),
                                fingerprint=f"{version}-{s}")
                     for s, r in rows.items() if r}).save_to_disk(str(out / "dataset"))
        prompts = opd_prompt_set(config.opd, random.Random(f"opd:{config.seed}"))
        Dataset.from_list(opd_rows(prompts)).save_to_disk(str(out / "opd"))
    finally:
        if bars:
            datasets.enable_progress_bars()


def summary_counts(stats: BuildStats) -> dict:
    """The closing summary: rollouts, kept, rejected by reason, retries kept."""
    rejected = Counter({k: v for k, v in stats.rejected.items() if k != "total" and v})
    total = stats.rejected.get("total", 0) + stats.rejected.get("duplicate", 0)
    return {"rollouts": stats.rollouts, "duplicate_scenarios": stats.duplicate_scenarios,
            "kept": stats.kept, "rejected_total": total, "rejected": dict(rejected),
            "retries_full": stats.retries.get("full", 0),
            "retries_final_only": stats.retries.get("final_only", 0),
            "imported": stats.imported, "extra": stats.extra,
            "bad_cases": stats.bad_cases, "splits": stats.splits}



def build_from_logs(harness: Harness, config: DataConfig, out: Path, log_file: str | Path, *,
                    accepted_versions: Sequence[str] = (), strict: bool = False,
                    harness_ref: str = "") -> tuple[BuildResult, list]:
    """Import a real-log JSONL file into a validated dataset directory.

    Bad rows are returned as `Problem`s (file:line) and left out; with `strict` any bad row
    raises `ConfigError` before anything is written. Held-out products and scenarios are
    drawn from those the logs mention; the every-skill check is off (logs cover what
    viewers asked)."""
    result = import_logs(log_file, harness, accepted_versions=accepted_versions)
    if result.problems and (strict or not result.trajectories):
        raise ConfigError(f"{log_file}: {len(result.bad_lines)} bad row(s) of "
                          f"{result.rows_read}", result.problems)
    products = sorted({p for t in result.trajectories for p in products_in(t.text())})
    heldout = choose_heldout(products, [t.scenario_id for t in result.trajectories],
                             config.splits, config.seed)
    config = replace(config, validation=replace(config.validation, require_all_skills=False))
    stats = BuildStats(imported=len(result.trajectories))
    built = finish(harness, config, out, result.trajectories, heldout, stats=stats,
                   harness_ref=harness_ref)
    return built, result.problems
