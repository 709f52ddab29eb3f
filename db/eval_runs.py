"""Where a checkpoint's evaluation outputs are: the MLflow run of its retrain job's eval stage.

The retrain flow (`flows/retrain.py`, the job's `judge` step) evaluates the candidate and the
champion of the time (the production model; the base model when there was no champion yet)
on the same scenarios and logs both reports under `reports/` of the job's `eval` stage run,
whose MLflow id `stage_runs` keeps. So a checkpoint's own cases are `CANDIDATE_CASES` of its
job's eval run, and the production baseline it was judged against is `CHAMPION_CASES` of the
same run. Read-only; the rows themselves are read with `hat_core.evidence.run_cases`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.models import ModelVersionRow, StageRun
from hat_core.errors import NotFoundError

EVAL_STAGE = "eval"
# The names the retrain flow writes its eval reports under (flows/retrain.py uses these).
REPORTS_ARTIFACT = "reports"
CANDIDATE_REPORT = "candidate.json"
CHAMPION_REPORT = "champion.json"
CANDIDATE_CASES = f"{REPORTS_ARTIFACT}/candidate.cases.jsonl"
CHAMPION_CASES = f"{REPORTS_ARTIFACT}/champion.cases.jsonl"
BASELINE = "production baseline"


@dataclass(frozen=True)
class CasesSource:
    """One side of a review from stored data: its name, the run and file of its case rows."""

    label: str
    run_id: str
    artifact: str
    model_version_id: int | None = None


def evaluated_checkpoints(session: Session, *, limit: int = 100) -> list[CasesSource]:
    """Checkpoints whose job logged an eval stage run, newest first (their own cases)."""
    query = (select(ModelVersionRow, StageRun.mlflow_run_id)
             .join(StageRun, StageRun.job_id == ModelVersionRow.job_id)
             .where(StageRun.stage == EVAL_STAGE, StageRun.mlflow_run_id != "")
             .order_by(ModelVersionRow.id.desc(), StageRun.id))
    out: dict[int, CasesSource] = {}
    for mv, run_id in session.execute(query):
        if mv.id not in out and len(out) < limit:
            out[mv.id] = _own(mv, run_id)
    return list(out.values())


def checkpoint_sources(session: Session, *, checkpoint_a: int, checkpoint_b: int | None
                       ) -> tuple[CasesSource, CasesSource]:
    """System A = checkpoint A's cases; B = checkpoint B's, or (None) the production
    baseline that checkpoint A's job evaluated beside it."""
    a = _checkpoint(session, checkpoint_a)
    if checkpoint_b is not None:
        return a, _checkpoint(session, checkpoint_b)
    job = session.get(ModelVersionRow, checkpoint_a).job_id
    return a, CasesSource(f"{BASELINE} (job {job})", a.run_id, CHAMPION_CASES)


def _checkpoint(session: Session, model_version_id: int) -> CasesSource:
    mv = session.get(ModelVersionRow, model_version_id)
    if mv is None:
        raise NotFoundError(f"no checkpoint (model version) with id {model_version_id}")
    run_id = session.scalars(
        select(StageRun.mlflow_run_id)
        .where(StageRun.job_id == mv.job_id, StageRun.stage == EVAL_STAGE,
               StageRun.mlflow_run_id != "")
        .order_by(StageRun.id).limit(1)).first() if mv.job_id is not None else None
    if run_id is None:
        raise NotFoundError(f"checkpoint {mv.registry_name} v{mv.version} has no evaluation "
                            "run: only checkpoints a retrain job evaluated have stored cases")
    return _own(mv, run_id)


def _own(mv: ModelVersionRow, run_id: str) -> CasesSource:
    return CasesSource(f"{mv.registry_name} v{mv.version}", run_id, CANDIDATE_CASES, mv.id)
