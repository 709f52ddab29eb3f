"""The retrain pipeline's stage functions, callable without Prefect: each wraps one hat_core
entry point with the paths the flow chose, and returns small references (paths, metrics).

`flows/retrain.py` turns each into a cached task; `benchmarks/orchestration_overhead.py`
calls them directly to measure what orchestration costs.

Stage outputs are folders under the job's work folder (`<home>/runs/<job key>/<stage>`), so a
finished stage is a folder that a resumed run finds again.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from flows.config import EvalSettings, LatencySettings
from hat_core.evaluation.judging import JudgeDecision
from hat_core.harness.model import Harness


def base_model_dir(path: str | None, size: str, seed: int, home: Path,
                   cache: Path | None = None) -> Path:
    """The base model directory: `path`, else the embedded base of `size`/`seed` built into
    `<home>/models/` (reused from the cache root `cache`, default `<home>/cache`).
    `NotFoundError` naming `base_model` when `path` is not a model directory (a relative path
    is read from the working directory)."""
    if path:
        folder = Path(path)
        if not (folder / "config.json").is_file():
            from hat_core.errors import NotFoundError, Problem

            where = "" if folder.is_absolute() else \
                f" (a relative path, read from the working directory {Path.cwd()})"
            raise NotFoundError(f"base_model {path}: not a model directory, no config.json in "
                                f"{folder.absolute()}{where}",
                                [Problem("base_model", "a model directory, e.g. one `hat base "
                                         "build --out DIR` wrote, or null to build the "
                                         "embedded base")])
        return folder
    from hat_core.basemodel import build_base_model

    out = home / "models" / f"base-{size}-seed{seed}"
    cache = cache or home / "cache"
    return build_base_model(out, size=size, seed=seed, cache_dir=cache / "base-models",
                            on_event=BuildProgress(f"base model {size} (seed {seed})")).path


class BuildProgress:
    """A base build's progress as plain lines on stderr (readable without a terminal): each
    phase, and pre-training about every 5% with the time left at the pace so far."""

    def __init__(self, name: str, out=None):
        self.name, self.out, self.start, self.shown = name, out or sys.stderr, time.monotonic(), -1

    def __call__(self, stage: str, info: dict) -> None:
        if stage != "step":
            self.start = time.monotonic()  # the steps' pace starts after the last phase
            self._say(f"{stage} {info}")
            return
        step, total = info["step"], max(info["total"], 1)
        share = int(20 * step / total)
        if share > self.shown:
            self.shown = share
            took = time.monotonic() - self.start
            left = took / max(step, 1) * (total - step)
            self._say(f"pre-training step {step}/{total}, loss {info.get('loss', 0):.3f}, "
                      f"{took / 60:.1f} min so far, about {left / 60:.1f} min left")

    def _say(self, text: str) -> None:
        print(f"{self.name}: {text}", file=self.out, flush=True)


def evaluate_model(
    model_dir: Path, harness: Harness, suites: tuple[str, ...], out: Path, *,
    settings: EvalSettings, gate: JudgeDecision | None = None,
    previous: Harness | None = None, reuse: Path | None = None,
) -> dict[str, float]:
    """Run the named suites on a local model under `harness` (`hat_core.evaluation.evaluate`),
    rendered with `settings.render_profile`, calls held to its tools with
    `settings.constrain_tools`;
    write `out` (JSON report + markdown), the per-case rows (`<out>.cases.jsonl`) and the bad
    cases (`<out>.badcases.jsonl`); return the flat metrics `{"suite.metric": value}`. An LLM
    judge (`settings.judge`) needs the judge gate's allowing decision `gate`. `previous`: the
    harness the `new` suite's kinds are new over.

    `reuse`: an earlier report of this same model, harness and settings (the job's zero-shot
    check of the model it now compares against). Its suites are taken as they are (greedy
    decoding plays them the same way again), marked `reused_from` in their summary, with their
    bad cases; only the other suites are played. A report of another model or harness is not
    reused."""
    from hat_core.cpu import torch_threads
    from hat_core.evaluation.badcases import JsonlBadCaseSink
    from hat_core.evaluation.evaluate import EvalOptions, evaluate, flat_metrics, write_cases
    from hat_core.evaluation.report import EvalReport, write_report
    from hat_core.harness.render import use_profile
    from hat_core.inference.backends import TransformersBackend

    options = EvalOptions(episodes=settings.episodes, variants=settings.variants,
                          limit=settings.limit, max_tokens=settings.max_tokens,
                          seed=settings.seed,
                          judge=settings.judge_config(), previous=previous,
                          new_cases=settings.new_cases)
    reused = reusable_suites(reuse, str(model_dir), harness, suites)
    sink = JsonlBadCaseSink(out.with_suffix(".badcases.jsonl"))
    try:
        if reused:
            for line in _lines(reuse.with_suffix(".badcases.jsonl")):
                if json.loads(line).get("suite") in reused:
                    sink.add_json(line)
        report = EvalReport(str(model_dir), harness.content_hash(), ())
        if to_play := [n for n in suites if n not in reused]:
            backend = TransformersBackend(model_dir, constrain_tools=settings.constrain_tools,
                                          batch_size=settings.batch_size)
            with use_profile(settings.render_profile), torch_threads(settings.num_threads):
                report = evaluate(backend, harness, to_play, options,
                                  model_name=str(model_dir), bad_cases=sink, gate=gate)
    finally:
        sink.close()
    played = {r.suite: r for r in report.suites}
    report = replace(report, suites=tuple(reused.get(n) or played[n] for n in suites))
    write_report(report, out)
    write_cases(report, out.with_suffix(".cases.jsonl"))
    return flat_metrics(report)


def reusable_suites(reuse: Path | None, model: str, harness: Harness,
                    suites: tuple[str, ...]) -> dict:
    """The suites of the report `reuse` that `evaluate_model` may take as they are: those
    asked for, when the report is of `model` under `harness` (else none; a report that cannot
    be read is played afresh); `{name: SuiteResult}` marked `reused_from`."""
    from hat_core.evaluation.report import read_eval_report

    report = read_eval_report(reuse) if reuse is not None else None
    if report is None or report.model != model or \
            report.harness_hash != harness.content_hash():
        return {}
    return {s.suite: replace(s, summary={**s.summary, "reused_from": str(reuse)})
            for s in report.suites if s.suite in suites}


def _lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()] \
        if path.is_file() else []


def measure_latency(model_dir: Path, harness: Harness, settings: LatencySettings,
                    out: Path, render_profile: str = "full") -> bool:
    """Serve the model on loopback, replay harness requests (system prompts rendered with
    `render_profile`, the evaluation's), apply the gate profile; write the report to `out`
    and return whether the profile passed."""
    from hat_core.evaluation.report import write_report
    from hat_core.harness.render import use_profile
    from hat_core.inference.server import transformers_server
    from hat_core.latency.measure import first_model_id, harness_requests, measure
    from hat_core.latency.profiles import get_profile

    profile = get_profile(settings.profile)
    with use_profile(render_profile):
        specs = harness_requests(harness, settings.requests)
    with transformers_server(model_dir) as url:
        name = first_model_id(url) or str(model_dir)
        report = measure(url, name, specs, settings.concurrency, profile,
                         max_tokens=settings.max_tokens)
    write_report(report, out)
    return report.passed


def build_dataset(harness: Harness, previous: Harness | None, data: dict, out: Path,
                  bad_cases: Sequence[dict] = ()) -> Path:
    """HSA training data for `harness`, edit-aware against the live `previous` version (the
    transforms the diff votes for weigh more; the scenario kinds it adds make `new_kind_share`
    of the bank), with the reviewed bad cases sent to training (`{"id", "episode"}` dicts,
    `flows.sent_cases`), validated; returns the dataset folder."""
    from flows.sent_cases import sent_cases
    from hat_core.data.build import build
    from hat_core.data.config import config_from_data

    data = dict(data)
    if previous is not None:
        data["hsa"] = edit_aware_hsa(data.get("hsa", {}), previous, harness)
    result = build(harness, config_from_data(data, source="retrain config: data"), out,
                   previous=previous, bad_cases=sent_cases(bad_cases))
    return Path(result.out)


def edit_aware_hsa(hsa: dict, previous: Harness, harness: Harness) -> dict:
    """The HSA config mapping with the transforms the previous -> new diff votes for raised."""
    from hat_core.diff.api import diff_harness
    from hat_core.hsa.config import config_from_data
    from hat_core.hsa.edit_aware import edit_aware_config

    tuned = edit_aware_config(config_from_data(dict(hsa), source="data.hsa"),
                              diff_harness(previous, harness))
    return tuned.to_dict()


def train_stage(stage: str, settings: dict, *, base: Path, output_dir: Path,
                inputs: dict[str, str], tracking_uri: str | None, experiment: str = "",
                parent_run_id: str | None = None) -> dict:
    """Run one HAT stage (`sft`, `opd`, `rl`: `hat_core.training.<stage>.run_<stage>`) from
    `base` into `output_dir` (`inputs` are the job's defaults, e.g. the dataset; `settings`
    from the config win), logged as a nested MLflow run of the job (no tracking without a
    `tracking_uri`); returns the
    `StageResult` as a dict (output dir, steps, metrics, run id)."""
    import importlib

    from hat_core.training.config import build_stage_config
    from hat_core.training.tracking import StageTracking

    config = build_stage_config(stage, {**inputs, **settings, "base": str(base),
                                        "output_dir": str(output_dir)})
    run = getattr(importlib.import_module(f"hat_core.training.{stage}"), f"run_{stage}")
    tracking = StageTracking(tracking_uri, experiment, stage, run_name=stage,
                             parent_run_id=parent_run_id) if tracking_uri else None
    try:
        result = run(config, tracking=tracking, resume=True)  # continue a killed stage
    except (OSError, RuntimeError) as exc:
        full = disk_full(stage, output_dir, exc)
        if full is None:
            raise
        raise full from exc
    return json.loads(json.dumps(result.to_dict(), default=str))


FULL_BELOW = 64 * 2**20  # bytes free under which a failed write is taken for a full disk


def disk_full(stage: str, output_dir: Path, exc: BaseException) -> OSError | None:
    """An `OSError(ENOSPC)` naming the stage and folder when `exc` came from a full disk,
    else None. torch's checkpoint writer reports a full disk as a `RuntimeError`
    ("unexpected pos ...", "iostream error"), so the free space left decides as well."""
    import errno
    import shutil

    folder = Path(output_dir)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    if getattr(exc, "errno", None) != errno.ENOSPC and free >= FULL_BELOW:
        return None
    return OSError(errno.ENOSPC, f"disk full while the {stage} stage wrote its checkpoint "
                                 f"under {output_dir} ({free} bytes free): {exc}"[:1000])
