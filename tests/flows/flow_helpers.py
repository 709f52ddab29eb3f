"""Helpers of the flow tests: put harness versions, jobs, users and registered model versions
into the stores through the real code."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from db.engine import in_transaction
from db.flow_repo import claim_job
from db.harness_repo import submit_harness
from db.users_repo import add_user
from flows.registration import register_candidate
from flows.retrain import job_key
from flows.tracking import Tracking
from hat_core.harness.io import load_harness

V1 = Path(__file__).resolve().parents[2] / "examples" / "harnesses" / "v1.yaml"


def submit_variant(sessions, i: int, line: str | None = None):
    """Store v1 with description `variant i` (a distinct version) and return it."""
    update = {"description": f"variant {i}"} | ({"harness": line} if line else {})
    harness = load_harness(V1).model_copy(update=update)
    return in_transaction(sessions, lambda s: submit_harness(s, harness=harness, author="ann"))


def add_role(sessions, name: str, role: str) -> None:
    in_transaction(sessions, lambda s: add_user(s, name=name, role=role,
                                                password="correct horse", actor="test"))


def registered_version(sessions, tracking: Tracking, registry_name: str, tmp: Path, i: int,
                       passed: bool, metrics: dict | None = None,
                       gates: dict | None = None, cases_uri: str = "",
                       decoding: str = "free") -> str:
    """A harness version, its job and a registered checkpoint with gate results (`gates`,
    else one t1 gate that passed or failed)."""
    version = submit_variant(sessions, i)
    claim = in_transaction(sessions, lambda s: claim_job(
        s, harness_version_id=version.id, trigger="harness-change", owner=f"test-{i}",
        lease=timedelta(minutes=5)))
    key = job_key(version.line, version.number)
    parent = tracking.parent_run(version.line, key, {"hat.harness_version": str(version.number)})
    model = tmp / f"model-{i}"
    model.mkdir(parents=True, exist_ok=True)
    (model / "weights.txt").write_text(f"model {i}\n")
    gates = gates or {"passed": passed, "gates": {
        "t1": {"name": "t1", "passed": passed, "value": 0.5, "threshold": 0.6,
               "reason": "t1 check"}}}
    return register_candidate(tracking, sessions, job_id=claim.job.id, parent_id=parent,
                              registry_name=registry_name, model_dir=model, gates=gates,
                              metrics=metrics or {"t1.accuracy": 0.8},
                              harness_version_id=version.id, cases_uri=cases_uri,
                              decoding=decoding)
