"""The job's model in the registry: the current champion (checkpoint + reference numbers)
and the idempotent registration of a candidate (MLflow version, store rows, eval results,
bad cases for review, the `challenger` alias when its gates passed).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from db.badcases_repo import add_bad_case
from db.engine import in_transaction
from db.flow_repo import find_model_version, find_model_version_for_job
from db.release_repo import add_eval_result, list_eval_results, register_model_version
from flows.tracking import CHALLENGER, CHAMPION, Tracking
from hat_core.release.registry import DECODING_TAG
from hat_core.release.rules import gates_verdict


def champion_of(tracking: Tracking, sessions: sessionmaker[Session],
                registry_name: str) -> dict | None:
    """The champion's version, checkpoint folder, reference metrics and the URI of the per-case
    rows behind them (`""` when none were stored), or None."""
    number = tracking.alias_version(registry_name, CHAMPION)
    if number is None:
        return None
    with sessions() as s:
        stored = find_model_version(s, registry_name=registry_name, version=number)
        results = list_eval_results(s, model_version_id=stored.id) if stored else []
    metrics = {f"{r.suite}.{r.metric}": r.value for r in results}
    cases_uri = next((r.cases_uri for r in results if r.cases_uri), "")
    model_dir = tracking.model_source_dir(registry_name, number)
    return {"version": number, "model_dir": str(model_dir), "metrics": metrics,
            "cases_uri": cases_uri}


def register_candidate(tracking: Tracking, sessions: sessionmaker[Session], *, job_id: int,
                       parent_id: str, registry_name: str, model_dir: Path, gates: dict,
                       metrics: dict[str, float], harness_version_id: int,
                       bad_cases: Path | None = None, cases_uri: str = "",
                       decoding: str = "free") -> str:
    """Register the job's checkpoint once (MLflow + store + eval results + its bad cases,
    queued for review); alias `challenger` when the gates passed. Safe to repeat.
    `cases_uri` (`runs:/<eval run>/reports/candidate.cases.jsonl`) is where every eval
    result's per-case rows are; `decoding` how the evaluation decoded tool calls (`free` or
    `constrained-tools`), tagged `hat.decoding` so the gateway serves the version that way."""
    with sessions() as s:
        known = find_model_version_for_job(s, job_id=job_id, registry_name=registry_name)
    tags = {"hat.gates_passed": str(bool(gates.get("passed"))).lower(),
            "hat.gates_verdict": str(gates.get("verdict") or gates_verdict(gates)),
            DECODING_TAG: decoding}
    version = known.version if known else tracking.register(parent_id, registry_name,
                                                            model_dir, tags)
    if known is None:
        in_transaction(sessions, lambda s: _store_version(
            s, registry_name, version, job_id, parent_id, gates, metrics, harness_version_id,
            bad_cases, cases_uri))
    if gates.get("passed"):
        tracking.set_alias(registry_name, CHALLENGER, version)
    return version


def _store_version(s: Session, registry_name: str, version: str, job_id: int, run_id: str,
                   gates: dict, metrics: dict[str, float], harness_version_id: int,
                   bad_cases: Path | None, cases_uri: str) -> None:
    mv = register_model_version(s, registry_name=registry_name, version=version, job_id=job_id,
                                mlflow_run_id=run_id, gate_results=gates)
    for name, value in metrics.items():
        suite, _, metric = name.partition(".")
        add_eval_result(s, model_version_id=mv.id, suite=suite, metric=metric, value=value,
                        harness_version_id=harness_version_id, cases_uri=cases_uri)
    for case in _bad_cases(bad_cases):
        scores = {**case.get("judge_scores", {}), "suite": case.get("suite"),
                  "case_id": case.get("case_id"), "variant_id": case.get("variant_id"),
                  "reason": case.get("reason", "")}
        add_bad_case(s, episode=case.get("episode", {}), harness_version_id=harness_version_id,
                     model_version_id=mv.id, failure_type=case.get("failure_type", "unknown"),
                     judge_scores=scores)


def _bad_cases(path: Path | None) -> list[dict]:
    if path is None or not path.is_file():
        return []
    from hat_core.evaluation.badcases import read_bad_cases

    return read_bad_cases(path)
