"""Job and checkpoint data shaped for the console's tables and charts (no Streamlit).

Stage metrics are the `StageRunInfo.metrics` summaries: numbers are shown in the stage
table, lists of numbers are curves (`loss_curve`, `rewards/<name>/mean`, ...), one point per
logging step spread over `steps`. Latency percentiles are eval results of suite `latency`.
"""

from __future__ import annotations

from numbers import Number

from db.values import EvalResult, StageRunInfo

LATENCY_SUITE = "latency"


def stage_rows(stages: list[StageRunInfo]) -> list[dict]:
    """One row per stage: its MLflow run and scalar metrics."""
    rows = []
    for s in stages:
        scalars = {k: v for k, v in s.metrics.items() if _scalar(v)}
        rows.append({"stage": s.stage, "mlflow run": s.mlflow_run_id,
                     "recorded": f"{s.created_at:%Y-%m-%d %H:%M}",
                     "metrics": ", ".join(f"{k}={_fmt(v)}" for k, v in scalars.items())})
    return rows


def curve_points(stages: list[StageRunInfo]) -> list[dict]:
    """Long-form points {stage, metric, step, value} of every list-valued metric."""
    points = []
    for s in stages:
        for name, values in s.metrics.items():
            if not (isinstance(values, list) and values and all(_scalar(v) for v in values)):
                continue
            span = s.metrics.get("steps") if _scalar(s.metrics.get("steps")) else len(values)
            step = span / len(values)
            points += [{"stage": s.stage, "metric": name, "step": round(i * step),
                        "value": float(v)} for i, v in enumerate(values)]
    return points


def reward_points(points: list[dict]) -> list[dict]:
    """The reward-component curves only (`rewards/<name>/...`), named by component."""
    return [{**p, "metric": p["metric"].split("/")[1]} for p in points
            if p["metric"].startswith("rewards/")]


def eval_rows(results: list[EvalResult]) -> list[dict]:
    """The eval report: suite, metric, value."""
    return [{"suite": r.suite, "metric": r.metric, "value": r.value} for r in results]


def latency_rows(results: list[EvalResult], label: str = "") -> list[dict]:
    """Latency percentiles (suite `latency`) as {model, percentile, seconds}."""
    return [{"model": label, "percentile": r.metric, "seconds": r.value}
            for r in results if r.suite == LATENCY_SUITE]


def comparison_rows(a: list[EvalResult], b: list[EvalResult], *, a_label: str,
                    b_label: str) -> list[dict]:
    """One row per (suite, metric) in either: both values and b - a."""
    av = {(r.suite, r.metric): r.value for r in a}
    bv = {(r.suite, r.metric): r.value for r in b}
    rows = []
    for key in sorted(av.keys() | bv.keys()):
        x, y = av.get(key), bv.get(key)
        rows.append({"suite": key[0], "metric": key[1], a_label: x, b_label: y,
                     "delta": None if x is None or y is None else round(y - x, 4)})
    return rows


def long_form(rows: list[dict], labels: tuple[str, str]) -> list[dict]:
    """Comparison rows as {metric, model, value} points for a grouped bar chart."""
    return [{"metric": f"{r['suite']}/{r['metric']}", "model": label, "value": r[label]}
            for r in rows for label in labels if r[label] is not None]


def _scalar(v) -> bool:
    return isinstance(v, Number) and not isinstance(v, bool)


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)
