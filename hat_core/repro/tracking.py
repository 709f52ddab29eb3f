"""The multi-seed aggregates of a reproduction table, logged to MLflow as one run.

    run_id = log_aggregates(results, "sqlite:///runs/repro/mlflow.db")   # after run_repro/merge

`results` is what `run_repro` or `report.merge_results` returns. The run (experiment
`hat-repro`, name `repro aggregate`, tag `hat.kind` = `repro-aggregate`, tag `hat.seeds` the
seeds pooled) holds, from `hat_core.repro.aggregate.aggregates`:

- per arm, suite and outcome, the pooled rate and its Wilson 95% interval and the mean ± sample
  std over seeds as metrics `agg.<arm>.<suite>.<outcome>.{pooled,low,high,mean,std}` (`std`
  left out for one seed), and `.cases` (cases pooled);
- per pair of arms (`a`, `b`, in the table's arm order), suite and outcome, the paired test
  as metrics `paired.<a>.<b>.<suite>.<outcome>.{diff,low,high,p}` (b - a pooled over seeds,
  its Bonett-Price interval, McNemar's exact p);
- the whole `aggregates` section as the artifact `aggregates.json` (families included), which
  the console's Compare page shows for such a run.

The per-seed parent runs (`repro seed N`) are named in the tag `hat.seed_runs` when known.
"""

from __future__ import annotations

from pathlib import Path

from hat_core.errors import NotFoundError, Problem
from hat_core.repro.aggregate import aggregates

EXPERIMENT = "hat-repro"
KIND = "repro-aggregate"
ARTIFACT = "aggregates.json"


def aggregate_metrics(agg: dict) -> dict[str, float]:
    """The metrics of the `aggregates` section (module doc), by key."""
    out: dict[str, float] = {}
    for arm, rates in agg["pooled"].items():
        for key, r in rates.items():
            stem = f"agg.{arm}.{key}"
            out |= {f"{stem}.pooled": r["rate"], f"{stem}.low": r["interval"][0],
                    f"{stem}.high": r["interval"][1], f"{stem}.mean": r["mean"],
                    f"{stem}.cases": float(r["cases"])}
            if r["std"] is not None:
                out[f"{stem}.std"] = r["std"]
    for p in agg["paired"]:
        stem = f"paired.{p['a']}.{p['b']}.{p['suite']}.{p['outcome']}"
        low, high = p["diff_interval"]
        out |= {f"{stem}.diff": p["diff"], f"{stem}.low": low, f"{stem}.high": high,
                f"{stem}.p": p["p_value"]}
    return {k: float(v) for k, v in out.items()}


def log_aggregates(results: dict, uri: str, *, run_name: str = "repro aggregate",
                   artifacts: Path | None = None) -> str:
    """A finished run in `uri` holding the aggregates of `results` (module doc); its id. A
    `hat-repro` experiment created here in a local store keeps its artifacts in `artifacts`
    (as `run.run_repro` does), when given."""
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    agg = results.get("aggregates") or aggregates(results)
    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(EXPERIMENT)
    local = not uri.startswith(("http://", "https://", "databricks"))
    exp = found.experiment_id if found else client.create_experiment(
        EXPERIMENT, artifact_location=Path(artifacts).resolve().as_uri()
        if local and artifacts else None)
    seeds = ",".join(sorted(results["seeds"]))
    parents = ",".join(s["mlflow_parent_run"] for s in results["seeds"].values()
                       if s.get("mlflow_parent_run"))
    tags = {"hat.kind": KIND, "hat.seeds": seeds}
    if parents:
        tags["hat.seed_runs"] = parents
    run = client.create_run(exp, run_name=run_name, tags=tags)
    run_id = run.info.run_id
    metrics = [Metric(k, v, 0, 0) for k, v in sorted(aggregate_metrics(agg).items())]
    for i in range(0, len(metrics), 1000):  # MLflow's batch limit
        client.log_batch(run_id, metrics=metrics[i:i + 1000])
    client.log_dict(run_id, agg, ARTIFACT)
    client.set_terminated(run_id)
    return run_id


def read_aggregates(uri: str, run_id: str) -> dict | None:
    """The `aggregates.json` of a `repro-aggregate` run; None for any other run. A run whose
    file cannot be read (its artifacts left on another machine, deleted) raises a
    `NotFoundError` naming the run and the file."""
    import json
    import tempfile

    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    if client.get_run(run_id).data.tags.get("hat.kind") != KIND:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        try:
            path = Path(client.download_artifacts(run_id, ARTIFACT, tmp))
        except MlflowException as exc:
            raise NotFoundError(f"cannot read {ARTIFACT} of run {run_id}",
                                [Problem(f"run {run_id}/{ARTIFACT}", exc.message)]) from None
        return json.loads(path.read_text(encoding="utf-8"))


def aggregate_runs(uri: str) -> list[dict]:
    """The `repro aggregate` runs of `uri`, newest first: `{run_id, name, seeds, started}`
    (none when the store has no `hat-repro` experiment)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(EXPERIMENT)
    if found is None:
        return []
    runs = client.search_runs([found.experiment_id], f"tags.`hat.kind` = '{KIND}'",
                              order_by=["attributes.start_time DESC"])
    return [{"run_id": r.info.run_id, "name": r.info.run_name,
             "seeds": r.data.tags.get("hat.seeds", ""), "started": r.info.start_time}
            for r in runs]
