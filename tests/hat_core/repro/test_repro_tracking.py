"""The multi-seed aggregates in a real MLflow store (SQLite in a temp dir): the pooled rate, its
Wilson interval, mean ± std and the paired test of a constructed two-seed case as metrics of
one `repro aggregate` run, and the whole section as its `aggregates.json`; a run whose file is
gone is named, not a traceback."""

from __future__ import annotations

import json
import math

import pytest
from mlflow.tracking import MlflowClient

from hat_core.errors import NotFoundError
from hat_core.evaluation.call_metrics import paired_difference_interval, wilson
from hat_core.repro.aggregate import aggregates, mcnemar_exact
from hat_core.repro.tracking import log_aggregates, read_aggregates


def _arm(t2: str, world: int) -> dict:
    ids = [f"t2/h000/s{i:05d}" for i in range(len(t2))]
    return {"eval_seed": world, "outcomes": {"t2": {"case_ids": ids, "first_call_exact": t2}}}


@pytest.fixture
def results() -> dict:
    # seed 0: fixed 3/10, hat 5/10; seed 1: fixed 5/10, hat 9/10 (same cases within a seed)
    return {"seeds": {
        "0": {"eval_seed": 0, "mlflow_parent_run": "p0", "eval": {
            "fixed_sft": _arm("1110000000", 0), "hat": _arm("1011110000", 0)}},
        "1": {"eval_seed": 1, "mlflow_parent_run": "p1", "eval": {
            "fixed_sft": _arm("1111100000", 1), "hat": _arm("1111011111", 1)}}}}


def test_aggregates_are_logged_as_metrics_and_an_artifact(results, tmp_path):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    run_id = log_aggregates(results, uri, artifacts=tmp_path / "mlartifacts")
    run = MlflowClient(tracking_uri=uri).get_run(run_id)
    m, tags = run.data.metrics, run.data.tags
    assert run.info.status == "FINISHED" and run.info.run_name == "repro aggregate"
    assert tags["hat.kind"] == "repro-aggregate" and tags["hat.seeds"] == "0,1"
    assert tags["hat.seed_runs"] == "p0,p1"
    key = "agg.hat.t2.first_call_exact"
    assert m[f"{key}.pooled"] == pytest.approx(0.7) and m[f"{key}.cases"] == 20
    assert (m[f"{key}.low"], m[f"{key}.high"]) == pytest.approx(wilson(14, 20))
    assert m[f"{key}.mean"] == pytest.approx(0.7)
    assert m[f"{key}.std"] == pytest.approx(math.sqrt(0.08))
    assert m["agg.fixed_sft.t2.first_call_exact.pooled"] == pytest.approx(0.4)
    # pooled pairs: seed 0 a_only 1 (case 1), b_only 3; seed 1 a_only 1, b_only 5
    pair = "paired.fixed_sft.hat.t2.first_call_exact"
    assert m[f"{pair}.diff"] == pytest.approx(0.3)
    assert (m[f"{pair}.low"], m[f"{pair}.high"]) == pytest.approx(
        paired_difference_interval(8, 2, 20))
    assert m[f"{pair}.p"] == pytest.approx(mcnemar_exact(2, 8))
    assert not any(k.startswith("agg.hat.t1") for k in m)  # nothing filled in
    agg = read_aggregates(uri, run_id)
    assert agg["pooled"]["hat"]["t2.first_call_exact"]["hits"] == 14
    assert agg["paired"][0]["diff_interval"] == pytest.approx(
        list(paired_difference_interval(8, 2, 20)))


def test_one_seed_has_no_std_and_other_runs_are_no_aggregate(results, tmp_path):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    del results["seeds"]["1"]
    run_id = log_aggregates(results, uri, artifacts=tmp_path / "mlartifacts")
    m = MlflowClient(tracking_uri=uri).get_run(run_id).data.metrics
    assert m["agg.hat.t2.first_call_exact.mean"] == pytest.approx(0.5)
    assert "agg.hat.t2.first_call_exact.std" not in m
    client = MlflowClient(tracking_uri=uri)
    other = client.create_run(client.get_experiment_by_name("hat-repro").experiment_id)
    assert read_aggregates(uri, other.info.run_id) is None


def test_the_logged_run_holds_exactly_the_aggregates_of_the_results(results, tmp_path):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    agg = aggregates(results)  # as `write_outputs` keeps it in results.json
    run_id = log_aggregates({**results, "aggregates": agg}, uri,
                            artifacts=tmp_path / "mlartifacts")
    metrics = MlflowClient(tracking_uri=uri).get_run(run_id).data.metrics
    rate = "t2.first_call_exact"
    assert set(metrics) == {
        *(f"agg.{arm}.{rate}.{k}" for arm in ("fixed_sft", "hat")
          for k in ("pooled", "low", "high", "mean", "std", "cases")),
        *(f"paired.fixed_sft.hat.{rate}.{k}" for k in ("diff", "low", "high", "p"))}
    assert read_aggregates(uri, run_id) == json.loads(json.dumps(agg))  # families too
    assert (tmp_path / "mlartifacts" / run_id / "artifacts" / "aggregates.json").is_file()


def test_a_run_whose_aggregates_file_is_gone_raises_a_not_found_error(results, tmp_path):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    run_id = log_aggregates(results, uri, artifacts=tmp_path / "mlartifacts")
    (tmp_path / "mlartifacts" / run_id / "artifacts" / "aggregates.json").unlink()
    with pytest.raises(NotFoundError, match=f"cannot read aggregates.json of run {run_id}"):
        read_aggregates(uri, run_id)
