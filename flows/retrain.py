"""The retrain flow: one run per harness version, from the zero-shot check to the
`challenger` alias. Deployment `retrain/harness-change` (see `flows/serve.py`).

    from flows.retrain import retrain
    retrain(harness_version=3)                      # in-process, what `hat retrain` runs

Steps (each task calls one function of db/, hat_core or flows/stages.py):
 0. the judge gate: an LLM judge (`eval.judge: llm`) needs the store's calibration to pass
    (`db.calibration_repo.judge_decision`), else the job is recorded `failed` ("judge gate
    refused: ...", retried by an operator) and the run ends with `JudgeGateError` before any
    MLflow run; the decision is tagged on the job's MLflow run (`hat.judge`, ...);
 1. claim the job row for (version, trigger) with a lease: a second run stops, "already handled";
 2. zero-shot check: the champion's T1/T2 cases on the new harness against its reference
    cases (those of its own evaluation), paired; only a passed verdict records "no retrain
    needed" with the evidence and stops (failed or inconclusive: retrain);
 3. data build (edit-aware HSA, validated) with the reviewed bad cases sent to training
    (`flows/sent_cases.py`: those the dataset took are marked consumed by it);
 4. HSA-SFT, General OPD, HSA-RL (one global concurrency slot); 5. suites + latency on the
    candidate, the champion side by side;
 6. gates (paired, on the same cases: passed / failed / inconclusive) -> MLflow registry
    (+ store, the verdict with the gate results and as tag `hat.gates_verdict`) -> alias
    `challenger` only when they passed.
Stage tasks cache on their inputs (`INPUTS + TASK_SOURCE`, persisted results), so a new run
after a crash skips finished stages; registration checks for the job's version first.
The job row records each stage as it is reached (`jobs.stage`). A stop from outside (signal,
lost lease, unreachable service: `flows/interruptions.py`) leaves the job `interrupted` (if
the store is down then, through the home's spool: `flows/interruption_spool.py`), and the
reconciler resumes it (`db/job_retries.py`); any other error leaves it `failed`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import INPUTS, TASK_SOURCE
from prefect.concurrency.sync import concurrency
from prefect.runtime import flow_run
from sqlalchemy.orm import Session, sessionmaker

from db.engine import in_transaction, make_engine, make_session_factory
from db.eval_runs import CANDIDATE_CASES, CANDIDATE_REPORT, CHAMPION_REPORT, REPORTS_ARTIFACT
from db.flow_repo import (
    HANDLED,
    JobClaim,
    claim_job,
    enter_stage,
    finish_job,
)
from db.harness_repo import get_version, get_version_by_id, latest_version
from db.jobs_repo import add_stage_run
from db.values import HarnessVersion
from flows import stages
from flows.config import EvalSettings, LatencySettings, RetrainConfig, load_retrain_config
from flows.interruption_spool import RECORDED, record_interruption, spool_dir
from flows.interruptions import (
    JobLease,
    LeaseLost,
    interruption_cause,
    watch_parent,
)
from flows.registration import champion_of, register_candidate
from flows.sent_cases import read_sent_cases, record_consumed
from flows.tracking import Tracking, experiment_name
from hat_core.data.manifest import read_manifest
from hat_core.evaluation.errors import JudgeGateError
from hat_core.evaluation.judging import JudgeDecision
from hat_core.evaluation.paired import read_case_rows
from hat_core.harness.model import Harness
from hat_core.release.gates import GateResults, evaluate_gates, evaluate_zero_shot
from hat_core.release.verdict import FAILED
from hat_core.serving.arms import FREE, HELD
from hat_core.settings import Settings, load_settings
from hat_core.sim.scenarios import new_kinds

FLOW_NAME = "retrain"
HARNESS_CHANGE, WEEKLY = "harness-change", "weekly"
CACHED = {"cache_policy": INPUTS + TASK_SOURCE, "persist_result": True}
# store and MLflow calls: retried through an outage of about 30 s (2 + 5 + 10 + 20 s);
# a longer one interrupts the job, and the reconciler resumes it
IO_RETRIES = {"retries": 4, "retry_delay_seconds": [2, 5, 10, 20]}
JUDGE_REFUSED = "judge gate refused: "  # the reason of a job the judge gate refused


def trigger_kind(trigger: str, now: datetime | None = None) -> str:
    """The job's trigger kind: `weekly` runs are one job per ISO week (`weekly-2026W49`)."""
    if trigger != WEEKLY:
        return trigger
    year, week, _ = (now or datetime.now(UTC)).isocalendar()
    return f"{WEEKLY}-{year}W{week:02d}"


def job_key(line: str, number: int, trigger: str = HARNESS_CHANGE) -> str:
    """The idempotency key of a retrain job (also the `run_deployment` key)."""
    prefix = "harness" if trigger == HARNESS_CHANGE else trigger
    return f"{prefix}-{line}-{number}"


# --- tasks: each one call --------------------------------------------------------------------

@task(**IO_RETRIES)
def claim(db_url: str, version_id: int, trigger: str, owner: str, lease_s: float) -> JobClaim:
    return in_transaction(_sessions(db_url), lambda s: claim_job(
        s, harness_version_id=version_id, trigger=trigger, owner=owner,
        lease=timedelta(seconds=lease_s)))


@task(**IO_RETRIES)
def parent_run(tracking: Tracking, line: str, key: str, tags: dict[str, str]) -> str:
    return tracking.parent_run(line, key, tags)


@task(**CACHED)
def base_model(path: str | None, size: str, seed: int, home: str, cache: str) -> str:
    return str(stages.base_model_dir(path, size, seed, Path(home), Path(cache)))


@task(**CACHED)
def evaluate(model_dir: str, harness_json: str, suites: tuple[str, ...], out: str,
             settings: EvalSettings, gate: JudgeDecision | None = None,
             previous_json: str | None = None, reuse: str | None = None) -> dict[str, float]:
    previous = _harness(previous_json) if previous_json else None
    return stages.evaluate_model(Path(model_dir), _harness(harness_json), suites, Path(out),
                                 settings=settings, gate=gate, previous=previous,
                                 reuse=Path(reuse) if reuse else None)


@task(**CACHED)
def latency(model_dir: str, harness_json: str, settings: LatencySettings, out: str,
            render_profile: str = "full") -> bool:
    return stages.measure_latency(Path(model_dir), _harness(harness_json), settings, Path(out),
                                  render_profile=render_profile)


@task(**CACHED)
def build_data(harness_json: str, previous_json: str | None, data: dict, out: str,
               bad_cases: list[dict]) -> str:
    previous = _harness(previous_json) if previous_json else None
    return str(stages.build_dataset(_harness(harness_json), previous, data, Path(out),
                                    bad_cases))


@task(**IO_RETRIES)
def sent_to_training(db_url: str, version_id: int, job_id: int) -> list[dict]:
    return read_sent_cases(_sessions(db_url), harness_version_id=version_id, job_id=job_id)


@task(**IO_RETRIES)
def consume_bad_cases(db_url: str, dataset: str, job_id: int) -> dict:
    """Record the cases the ready dataset took; warn about the ones it skipped."""
    manifest = read_manifest(dataset)
    fed = manifest.get("bad_cases") or {}
    for skip in fed.get("skipped", ()):
        get_run_logger().warning("bad case %s skipped: %s", skip["id"], skip["reason"])
    record_consumed(_sessions(db_url), manifest, job_id=job_id, actor=f"retrain job {job_id}")
    return fed


@task(**CACHED)
def train(stage: str, settings: dict, base: str, output_dir: str, inputs: dict[str, str],
          tracking_uri: str, experiment: str, parent_id: str) -> dict:
    return stages.train_stage(stage, settings, base=Path(base), output_dir=Path(output_dir),
                              inputs=inputs, tracking_uri=tracking_uri, experiment=experiment,
                              parent_run_id=parent_id)


@task(**IO_RETRIES)
def log_stage(tracking: Tracking, parent_id: str, stage: str, metrics: dict,
              artifacts: dict[str, str], tags: dict[str, str] | None = None) -> str:
    return tracking.stage_run(parent_id, stage, metrics=metrics,
                              artifacts={k: Path(v) for k, v in artifacts.items()}, tags=tags)


@task(**IO_RETRIES)
def reference_cases(tracking: Tracking, cases_uri: str, out: str) -> str | None:
    return tracking.download_cases(cases_uri, Path(out))


@task(**IO_RETRIES)
def record_stage(db_url: str, job_id: int, stage: str, run_id: str, metrics: dict,
                 uri: str) -> None:
    from db.flow_repo import find_stage_run

    def write(s: Session) -> None:
        if find_stage_run(s, job_id=job_id, stage=stage) is None:
            add_stage_run(s, job_id=job_id, stage=stage, mlflow_run_id=run_id,
                          metrics=_numeric(metrics), artifact_uri=uri)
    in_transaction(_sessions(db_url), write)


@task(**IO_RETRIES)
def register(tracking: Tracking, db_url: str, job_id: int, parent_id: str, config: RetrainConfig,
             model_dir: str, gates: dict, metrics: dict, version_id: int,
             bad_cases: str, cases_uri: str) -> str:
    return register_candidate(tracking, _sessions(db_url), job_id=job_id, parent_id=parent_id,
                              registry_name=config.registry_name, model_dir=Path(model_dir),
                              gates=gates, metrics=metrics, harness_version_id=version_id,
                              bad_cases=Path(bad_cases), cases_uri=cases_uri,
                              decoding=HELD if config.eval.constrain_tools else FREE)


@task(**IO_RETRIES)
def reach(db_url: str, job_id: int, owner: str, stage: str) -> None:
    if not in_transaction(_sessions(db_url), lambda s: enter_stage(
            s, job_id=job_id, owner=owner, stage=stage)):
        raise LeaseLost(f"job {job_id} is no longer held by {owner}")


@task(**IO_RETRIES)
def finish(db_url: str, job_id: int, state: str, reason: str) -> None:
    in_transaction(_sessions(db_url),
                   lambda s: finish_job(s, job_id=job_id, to=state, reason=reason))


# --- the flow --------------------------------------------------------------------------------

@flow(name=FLOW_NAME)
def retrain(harness_version: int | None = None, line: str | None = None,
            trigger: str = HARNESS_CHANGE, config_path: str | None = None) -> dict:
    """Handle one harness version (default: the latest of `line`, or of the only line)."""
    watch_parent()
    settings = load_settings()
    config = with_judge_endpoint(load_retrain_config(config_path), settings)
    db_url = settings.resolved_database_url()
    version, previous = resolve_version(_sessions(db_url), harness_version, line)
    trigger = trigger_kind(trigger)
    key = job_key(version.line, version.number, trigger)
    owner = str(flow_run.get_id() or key)
    try:
        gate = eval_judge_gate(_sessions(db_url), config.eval, settings)  # before the work
    except JudgeGateError as exc:
        refused(db_url, version.id, trigger, owner, config.job_lease_s, exc)
        raise
    got = claim(db_url, version.id, trigger, owner, config.job_lease_s)
    if got.outcome == HANDLED:
        get_run_logger().info("%s already handled (job %s, %s)", key, got.job.id, got.job.state)
        return {"job_key": key, "job_id": got.job.id, "outcome": HANDLED, "state": got.job.state}
    with JobLease(_sessions(db_url), got.job.id, owner, config.job_lease_s,
                  on_error=get_run_logger().warning) as lease:
        return _run_job(settings, config, db_url, version, previous, key, trigger, got, gate,
                        lease)


def refused(db_url: str, version_id: int, trigger: str, owner: str, lease_s: float,
            exc: JudgeGateError) -> None:
    """Record the judge gate's refusal on the job: `failed` with the refusal (the job's own
    failure: the console's or `hat job retry`'s retry runs it again, once the calibration
    passes). A job another run holds, or one already finished, is left as it is."""
    got = claim(db_url, version_id, trigger, owner, lease_s)
    if got.proceed:
        finish(db_url, got.job.id, "failed", f"{JUDGE_REFUSED}{exc}"[:2000])


def _run_job(settings: Settings, config: RetrainConfig, db_url: str, version: HarnessVersion,
             previous: HarnessVersion | None, key: str, trigger: str, got: JobClaim,
             gate: JudgeDecision, lease: JobLease) -> dict:
    tracking = make_tracking(settings)
    tags = {"hat.harness_line": version.line, "hat.harness_version": str(version.number),
            "hat.trigger": trigger, "hat.job_id": str(got.job.id),
            "hat.config_hash": config.config_hash()}
    parent_id = parent_run(tracking, version.line, key, tags)
    tracking.log(parent_id, tags={f"hat.{k}": v for k, v in gate.params().items()})
    tracking.log_json(parent_id, "retrain_config.json", config.to_dict())
    ctx = _Job(settings, config, db_url, tracking, version, previous, key, got.job.id, parent_id,
               gate, lease.owner)
    try:
        result = ctx.run()
    except BaseException as exc:
        _stopped(exc, ctx, got, lease, config)
        raise
    lease.stop()  # the job ends here: a beat after `finish` must not read it as lost
    if lease.lost.is_set():  # lost before that: another run holds the job, leave it alone
        raise LeaseLost(f"job {got.job.id} is no longer held by {lease.owner}")
    finish(db_url, got.job.id, "succeeded", result["verdict"])
    tracking.finish(parent_id)
    return {"job_key": key, "job_id": got.job.id, "outcome": got.outcome, **result}


def _stopped(exc: BaseException, ctx: _Job, got: JobClaim, lease: JobLease,
             config: RetrainConfig) -> None:
    """Record how the job stopped: interrupted from outside (resumed later) or failed."""
    cause = interruption_cause(exc, lease)
    lease.stop()  # either way the store's job is about to change: no beat may read it as lost
    if cause is None:
        finish(ctx.db_url, got.job.id, "failed", f"{type(exc).__name__}: {exc}"[:2000])
        ctx.tracking.finish(ctx.parent_id, "FAILED")
        return
    outcome = record_interruption(_sessions(ctx.db_url), got.job, lease.owner, cause,
                                  config.resume, spool_dir(ctx.settings.home))
    if outcome == RECORDED:  # taken over: another run owns job and run; spooled: store down
        ctx.tracking.finish(ctx.parent_id, "KILLED")


class _Job:
    """The steps of one claimed job (a plain object so the flow body stays short)."""

    def __init__(self, settings, config, db_url, tracking, version, previous, key, job_id,
                 parent_id, gate, owner):
        self.settings, self.config, self.db_url, self.tracking = settings, config, db_url, tracking
        self.version, self.previous, self.key = version, previous, key
        self.job_id, self.parent_id, self.gate, self.owner = job_id, parent_id, gate, owner
        self.work = Path(settings.home).resolve() / "runs" / key
        self.harness_json = version.document
        self.previous_json = previous.document if previous else None
        # scenario kinds this version adds over its parent: judged by the `new` suite
        self.new_kinds = new_kinds(_harness(version.document),
                                   _harness(previous.document) if previous else None)

    @property
    def zero_shot_report(self) -> Path:
        return self.work / "zero_shot" / "report.json"

    def with_new(self, suites: tuple[str, ...]) -> tuple[str, ...]:
        """`suites`, plus `new` when this version adds scenario kinds."""
        return (*suites, "new") if self.new_kinds and "new" not in suites else suites

    def run(self) -> dict:
        champion = champion_of(self.tracking, _sessions(self.db_url), self.config.registry_name)
        c = self.config
        self.reach("base")
        base = base_model(c.base_model, c.base_size, c.base_seed,
                          str(Path(self.settings.home).resolve()),
                          str(self.settings.resolved_cache_dir().resolve()))
        zero = self.zero_shot(champion, base)
        if zero is not None:
            return zero
        candidate = self.train_candidate(base, champion)
        return self.judge(candidate, champion, base)

    def reach(self, stage: str) -> None:
        """Record the stage this job has reached (stops the run if its lease was lost)."""
        reach(self.db_url, self.job_id, self.owner, stage)

    def zero_shot(self, champion: dict | None, base: str) -> dict | None:
        self.reach("zero_shot")
        ev = self.config.eval
        model = champion["model_dir"] if champion else base
        metrics = evaluate(model, self.harness_json, self.with_new(ev.zero_shot_suites),
                           str(self.zero_shot_report), ev, self.gate, self.previous_json)
        if champion is None:
            verdict = GateResults(())
            reason = "no champion yet: retrain needed"
        else:
            reference = reference_cases(self.tracking, champion["cases_uri"],
                                        str(self.work / "zero_shot" / "reference"))
            current = read_case_rows(self.zero_shot_report)
            verdict = evaluate_zero_shot(current, _rows(reference), self.config.gates,
                                         self.new_kinds)
            reason = zero_shot_reason(verdict)
        self.record("zero_shot", metrics, {"report": self.work / "zero_shot"},
                    extra={"verdict": verdict.to_dict(), "reason": reason,
                           "judge": self.gate.to_dict(), "new_kinds": list(self.new_kinds)},
                    tags={"hat.zero_shot_verdict": verdict.verdict})
        if champion is not None and verdict.passed:
            return {"verdict": reason, "retrained": False, "gates": verdict.to_dict()}
        return None

    def train_candidate(self, base: str, champion: dict | None = None) -> str:
        previous_json = self.previous_json
        self.reach("data")
        cases = sent_to_training(self.db_url, self.version.id, self.job_id)
        dataset = build_data(self.harness_json, previous_json, self.config.data,
                             str(self.work / "data"), cases)
        fed = consume_bad_cases(self.db_url, dataset, self.job_id)
        model, settings = start_of(self.config, base, champion)
        start = f"champion v{champion['version']}" if model != base else "base"
        self.record("data", {"bad_case_rows": fed.get("rows", 0)}, {"dataset": Path(dataset)},
                    extra={"start_model": start, "start_dir": model,
                           "bad_cases": fed.get("ids", []),
                           "bad_cases_skipped": [s["id"] for s in fed.get("skipped", ())]},
                    tags={"hat.start_model": start})
        inputs = {"sft": {"dataset": dataset},
                  "opd": {"teacher": base, "prompts": str(Path(dataset) / "opd")},
                  "rl": {"harness": str(self.work / "harness.json")}}
        (self.work).mkdir(parents=True, exist_ok=True)
        (self.work / "harness.json").write_text(self.harness_json, encoding="utf-8")
        with concurrency(self.config.train_slot, occupy=1):
            for stage in ("sft", "opd", "rl"):
                self.reach(stage)
                out = train(stage, settings[stage], model,
                            str(self.work / stage), inputs[stage], self.tracking.tracking_uri,
                            experiment_name(self.version.line), self.parent_id)
                record_stage(self.db_url, self.job_id, stage, out.get("run_id") or "",
                             out.get("metrics", {}), out["output_dir"])
                model = out["output_dir"]
        return model

    def judge(self, candidate: str, champion: dict | None, base: str) -> dict:
        ev = self.config.eval
        run = self.work / "eval"
        gate = self.gate
        self.reach("eval")
        suites = self.with_new(ev.suites)
        cand = evaluate(candidate, self.harness_json, suites, str(run / CANDIDATE_REPORT), ev,
                        gate, self.previous_json)
        champ_dir = champion["model_dir"] if champion else base
        # the zero-shot check played this model on this harness already: its suites are taken
        # from that report, only the others (IFEval) are played (stages.evaluate_model)
        champ = evaluate(champ_dir, self.harness_json, suites, str(run / CHAMPION_REPORT), ev,
                         gate, self.previous_json, reuse=str(self.zero_shot_report))
        # IFE-P's reference: the base model's cases (without a champion, champ's are the
        # base's), or with `gates.ife_p_reference: champion` the live champion's
        by_base = bool(champion) and self.config.gates.ife_p_reference == "base"
        if by_base:
            evaluate(base, self.harness_json, ev.suites, str(run / "base.json"), ev, gate)
        self.reach("latency")
        fast = latency(candidate, self.harness_json, self.config.latency,
                       str(run / "latency.json"), ev.render_profile)
        champ_rows = read_case_rows(run / CHAMPION_REPORT)
        base_rows = read_case_rows(run / "base.json") if by_base else champ_rows
        gates = evaluate_gates(read_case_rows(run / CANDIDATE_REPORT), champ_rows, base_rows,
                               fast, self.config.gates, self.new_kinds)
        side = {f"candidate.{k}": v for k, v in cand.items()} | \
               {f"champion.{k}": v for k, v in champ.items()}
        self.reach("register")
        eval_run = self.record("eval", side, {REPORTS_ARTIFACT: run},
                               extra={"gates": gates.to_dict(), "judge": gate.to_dict(),
                                      "new_kinds": list(self.new_kinds)},
                               tags={"hat.gates_verdict": gates.verdict,
                                     "hat.eval_render_profile": ev.render_profile,
                                     "hat.eval_decoding": HELD
                                     if ev.constrain_tools else FREE})
        mv = register(self.tracking, self.db_url, self.job_id, self.parent_id, self.config,
                      candidate, gates.to_dict(), cand, self.version.id,
                      str(run / "candidate.badcases.jsonl"),
                      f"runs:/{eval_run}/{CANDIDATE_CASES}")
        verdict = candidate_reason(mv, gates)
        return {"verdict": verdict, "retrained": True, "model_version": mv,
                "gates": gates.to_dict()}

    def record(self, stage: str, metrics: dict, artifacts: dict[str, Path],
               extra: dict | None = None, tags: dict[str, str] | None = None) -> str:
        """Log the stage's MLflow run (with `tags`) and its store row; the run id."""
        files = {k: str(v) for k, v in artifacts.items() if Path(v).exists()}
        run_id = log_stage(self.tracking, self.parent_id, stage, _numeric(metrics), files, tags)
        if extra:
            self.tracking.log_json(run_id, f"{stage}.json", extra)
        record_stage(self.db_url, self.job_id, stage, run_id, {**metrics, **(extra or {})},
                     str(self.work / stage))
        return run_id


# --- plain functions the tasks and the CLI use -------------------------------------------------

def start_of(config: RetrainConfig, base: str, champion: dict | None) -> tuple[str, dict]:
    """Where the candidate's training starts and each stage's settings: the base model, or
    with `warm_start.enabled` and a champion, the champion's checkpoint with the warm-start
    SFT overrides."""
    settings = {"sft": dict(config.sft), "opd": dict(config.opd), "rl": dict(config.rl)}
    if not (config.warm_start.enabled and champion):
        return base, settings
    settings["sft"] |= config.warm_start.sft
    return champion["model_dir"], settings


def zero_shot_reason(verdict: GateResults) -> str:
    """The zero-shot step's outcome: only a passed check spares the retrain."""
    if verdict.passed:
        return "zero-shot passed: no retrain needed"
    return f"zero-shot {verdict.verdict} ({verdict.summary()}): retrain needed"


def candidate_reason(version: str, gates: GateResults) -> str:
    """The job's reason after registering a candidate: challenger, failed or inconclusive."""
    if gates.passed:
        return f"retrained: version {version} is the challenger"
    if gates.verdict == FAILED:
        return f"retrained: version {version} failed gates ({gates.summary()})"
    return (f"retrained: version {version} is inconclusive on its gates ({gates.summary()}): "
            "not the challenger; promoting it needs an admin override with a reason")


def _rows(path: str | None) -> list[dict] | None:
    return read_case_rows(Path(path)) if path else None


def resolve_version(sessions: sessionmaker[Session], number: int | None,
                    line: str | None) -> tuple[HarnessVersion, HarnessVersion | None]:
    """The stored version (number of `line`, or the latest) and its parent."""
    with sessions() as s:
        if number is None:
            from db.harness_repo import list_lines

            chosen = line or list_lines(s)[0]
            version = latest_version(s, line=chosen)
        else:
            version = get_version(s, number=number, line=line)
        parent = get_version_by_id(s, version_id=version.parent_id) if version.parent_id else None
    return version, parent


def with_judge_endpoint(config: RetrainConfig, settings: Settings) -> RetrainConfig:
    """`config` with `eval.judge_base_url` defaulted to `HAT_TEACHER_ENDPOINT`."""
    import dataclasses

    ev = config.eval
    if ev.judge == "rule" or ev.judge_base_url or not settings.teacher_endpoint:
        return config
    return dataclasses.replace(config, eval=dataclasses.replace(
        ev, judge_base_url=settings.teacher_endpoint))


def eval_judge_gate(sessions: sessionmaker[Session] | None, ev: EvalSettings,
                    settings: Settings) -> JudgeDecision:
    """`db.calibration_repo.judge_gate` on the retrain config's `eval.judge`, with the
    settings' thresholds; the flow has no override."""
    from db.calibration_repo import judge_gate
    from hat_core.evaluation.judging import check_judge_config

    return judge_gate(sessions, config=check_judge_config(ev.judge_config(), where="eval.judge"),
                      min_kappa=settings.judge_min_kappa, min_n=settings.judge_min_items)


def make_tracking(settings: Settings) -> Tracking:
    """The MLflow store of the settings; local stores keep artifacts under the HAT home."""
    uri = settings.resolved_mlflow_uri()
    local = uri.startswith(("sqlite:", "file:")) or "://" not in uri
    root = Path(settings.home).resolve() / "mlartifacts" if local else None
    return Tracking(uri, root)


_FACTORIES: dict[str, sessionmaker[Session]] = {}


def _sessions(db_url: str) -> sessionmaker[Session]:
    if db_url not in _FACTORIES:
        _FACTORIES[db_url] = make_session_factory(make_engine(db_url))
    return _FACTORIES[db_url]


def _harness(document: str) -> Harness:
    return Harness.model_validate(json.loads(document))


def _numeric(metrics: dict) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items()
            if isinstance(v, int | float) and not isinstance(v, bool)}


