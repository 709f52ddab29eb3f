"""Test data for the console tests: one user per role, and a small history.

    from demo_data import add_demo_users, add_demo_history
    in_transaction(sessions, lambda s: add_demo_users(s, password="..."))
    in_transaction(sessions, add_demo_history)

`add_demo_history` stores the example harness weeks v1-v4, a retrain job per version with
stage runs (metric curves), three registered model versions with gate results in the flows'
format (`GateResults.to_dict()`; two pass, one fails T2), their evaluation results (with
latency percentiles), the first one as champion of the A/B slot `ab`, and bad cases played by
the simulator (a policy that memorised v1, shown v2: the failure HAT fixes).

`add_demo_registry(registry, count)` registers the matching versions 1..count of `REGISTRY`
in an MLflow registry (with the `champion` alias on version 1), so that the console's
promotion can move the aliases like `hat promote` does.
"""

from __future__ import annotations

import math
from pathlib import Path

from sqlalchemy.orm import Session

from db.badcases_repo import add_bad_case
from db.harness_repo import submit_harness
from db.jobs_repo import add_stage_run, create_job, transition_job
from db.release_repo import add_eval_result, promote, register_model_version
from db.users_repo import add_user
from db.values import User
from hat_core.harness.io import load_harness
from hat_core.release.gates import GateCheck, GateResults
from hat_core.release.registry import ModelRegistry
from hat_core.release.rules import CHAMPION, SLOT
from hat_core.sim.batch import make_policy, simulate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "harnesses"
DEMO_ROLES = ("viewer", "reviewer", "operator", "admin")
REGISTRY = "live-stream-avatar"


def add_demo_users(session: Session, *, password: str, actor: str = "demo") -> list[User]:
    """One user per role, named after the role (viewer, reviewer, operator, admin)."""
    return [add_user(session, name=role, role=role, password=password, actor=actor)
            for role in DEMO_ROLES]


def add_demo_history(session: Session, *, bad_cases: int = 24) -> dict[str, int]:
    """The example weeks, jobs, stage runs, model versions, evals, bad cases; ids by name."""
    weeks = [load_harness(EXAMPLES / f"v{n}.yaml") for n in (1, 2, 3, 4)]
    versions = [submit_harness(session, harness=h, author="operator", note=f"week {47 + i}")
                for i, h in enumerate(weeks, start=1)]
    ids: dict[str, int] = {f"v{i}": v.id for i, v in enumerate(versions, start=1)}
    good = _finished_job(session, versions[1].id, "harness_change", succeeded=True)
    weak = _finished_job(session, versions[2].id, "weekly", succeeded=True)
    base = _finished_job(session, versions[0].id, "manual", succeeded=True)
    running = create_job(session, harness_version_id=versions[3].id, trigger="harness_change")
    transition_job(session, job_id=running.id, to="running")
    ids.update(job_good=good, job_weak=weak, job_base=base, job_running=running.id)
    ids["mv_base"] = _model(session, base, "1", passing=True, quality=0.78)
    ids["mv_good"] = _model(session, good, "2", passing=True, quality=0.91)
    ids["mv_weak"] = _model(session, weak, "3", passing=False, quality=0.70)
    promote(session, slot=SLOT, model_version_id=ids["mv_base"], actor="admin",
            reason="first release", gate_snapshot=_gates(passing=True, quality=0.78))
    _bad_cases(session, weeks, versions[1].id, ids["mv_base"], bad_cases)
    return ids


def _finished_job(session: Session, version_id: int, trigger: str, *, succeeded: bool) -> int:
    job = create_job(session, harness_version_id=version_id, trigger=trigger)
    transition_job(session, job_id=job.id, to="running")
    for stage, start in (("hsa_sft", 2.0), ("general_opd", 1.2), ("hsa_rl", 0.6)):
        add_stage_run(session, job_id=job.id, stage=stage, mlflow_run_id=f"{job.id:04d}{stage}",
                      metrics=_stage_metrics(stage, start))
    transition_job(session, job_id=job.id, to="succeeded" if succeeded else "failed")
    return job.id


def _stage_metrics(stage: str, start: float) -> dict:
    steps = range(0, 200, 10)
    metrics = {"loss": round(start * 0.35, 4), "steps": 200,
               "loss_curve": [round(start * math.exp(-s / 80) + 0.05, 4) for s in steps]}
    if stage == "hsa_rl":
        for i, name in enumerate(("accuracy", "effectiveness", "tool_rationality",
                                  "skill_selection")):
            metrics[f"rewards/{name}/mean"] = [round(0.4 + 0.5 * (1 - math.exp(-s / (60 + 20 * i)))
                                                     , 4) for s in steps]
    return metrics


def add_demo_registry(registry: ModelRegistry, *, count: int = 3) -> list[str]:
    """Versions 1..count of `REGISTRY` in the MLflow registry (`champion` on version 1), the
    registry side of `add_demo_history`'s model versions; returns their numbers."""
    registry.ensure_model(REGISTRY)
    numbers = [str(registry.client.create_model_version(REGISTRY, source=f"demo/{n}").version)
               for n in range(1, count + 1)]
    registry.set_alias(REGISTRY, CHAMPION, numbers[0])
    return numbers


def _gates(*, passing: bool, quality: float) -> dict:
    """Gate results as the retrain flow stores them (`GateResults.to_dict()`)."""
    t2 = round(quality - 0.05, 4)
    checks = (
        GateCheck("t1", True, quality, 0.7, f"{quality:.3f} >= champion 0.720 - 0.02"),
        GateCheck("t2", passing, t2, 0.75, f"{t2:.3f} {'>=' if passing else '<'} champion "
                                           "0.770 - 0.02"),
        GateCheck("ife_p", True, 0.7, 0.6, "0.700 >= base 0.650 - 0.05"),
        GateCheck("bad_case_rate", True, round(1 - quality, 3), 0.3,
                  f"{1 - quality:.3f} <= champion 0.300 + 0.0"),
        GateCheck("latency", True, True, True, "profile h20 passed"),
    )
    return GateResults(checks).to_dict()


def inconclusive_gates() -> dict:
    """Gate results of a candidate the paired gates could not tell from the champion: T1 and
    T2 at 0 against 0 on 8 cases (too few, and no case tells them apart), latency passed."""
    evidence = {"n": 8, "candidate": 0.0, "reference": 0.0, "candidate_only": 0,
                "reference_only": 0, "p_value": 1.0, "diff_interval": [0.0, 0.0],
                "alpha": 0.05, "min_cases": 30, "test": "mcnemar-exact"}
    why = "t{n}.accuracy 0.000 vs 0.000 on 8 paired cases: too few cases: 8 < min_cases 30"
    checks = (
        GateCheck("t1", False, 0.0, 0.0, why.format(n=1), "inconclusive", evidence),
        GateCheck("t2", False, 0.0, 0.0, why.format(n=2), "inconclusive", evidence),
        GateCheck("latency", True, True, True, "the latency profile passed"),
    )
    return GateResults(checks).to_dict()


def add_inconclusive_model(session: Session, *, job_id: int, version: str) -> int:
    """A registered model version whose gates were inconclusive (`inconclusive_gates`)."""
    return register_model_version(session, registry_name=REGISTRY, version=version,
                                  job_id=job_id, mlflow_run_id=f"run{job_id:04d}x",
                                  gate_results=inconclusive_gates()).id


def _model(session: Session, job_id: int, version: str, *, passing: bool, quality: float) -> int:
    mv = register_model_version(session, registry_name=REGISTRY, version=version, job_id=job_id,
                                mlflow_run_id=f"run{job_id:04d}",
                                gate_results=_gates(passing=passing, quality=quality))
    metrics = {("t1", "accuracy"): quality, ("t2", "accuracy"): quality - 0.05,
               ("ifeval", "prompt_strict"): 0.62 + quality / 10,
               ("tool_robustness", "accuracy"): quality - 0.08,
               ("prompt_robustness", "accuracy"): quality - 0.03,
               ("bad_case_rate", "rate"): round(1 - quality, 3),
               ("latency", "p50_s"): 2.9 - quality, ("latency", "p95_s"): 6.5 - quality,
               ("latency", "p99_s"): 8.0 - quality}
    for (suite, metric), value in metrics.items():
        add_eval_result(session, model_version_id=mv.id, suite=suite, metric=metric,
                        value=round(value, 4))
    return mv.id


def _bad_cases(session: Session, weeks, version_id: int, model_id: int, limit: int) -> None:
    results = simulate(weeks[1], make_policy("memorising", weeks[0]), episodes=4 * limit, seed=1)
    bad = [r for r in results if not r.verdict.passed][:limit]
    for r in bad:
        scores = {**r.scores.rewards(), "verdict": r.verdict.failure, "reason": r.verdict.reason,
                  "failures": list(r.verdict.failures)}
        add_bad_case(session, episode=r.episode.to_dict(), harness_version_id=version_id,
                     failure_type=r.verdict.failure or "no_answer", model_version_id=model_id,
                     judge_scores=scores)
