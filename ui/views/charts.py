"""Altair charts of the console: metric curves, checkpoint comparisons, latency."""

from __future__ import annotations

import altair as alt


def curves(points: list[dict], *, title: str = "") -> alt.Chart:
    """Lines of {stage, metric, step, value}, one colour per metric, one panel per stage."""
    return (
        alt.Chart(alt.Data(values=points), title=title).mark_line(point=False)
        .encode(x=alt.X("step:Q"), y=alt.Y("value:Q"), color=alt.Color("metric:N"),
                tooltip=["stage:N", "metric:N", "step:Q", "value:Q"])
        .properties(height=220, width=260)
        .facet(column=alt.Column("stage:N", title=None))
    )


def grouped_bars(points: list[dict], *, title: str = "") -> alt.Chart:
    """Bars of {metric, model, value}: the models side by side per metric."""
    return (
        alt.Chart(alt.Data(values=points), title=title).mark_bar()
        .encode(x=alt.X("metric:N", title=None), xOffset="model:N",
                y=alt.Y("value:Q"), color=alt.Color("model:N"),
                tooltip=["metric:N", "model:N", "value:Q"])
        .properties(height=280)
    )


def latency(points: list[dict]) -> alt.Chart:
    """Bars of {model, percentile, seconds}."""
    return (
        alt.Chart(alt.Data(values=points), title="Latency percentiles (s)").mark_bar()
        .encode(x=alt.X("percentile:N", title=None), xOffset="model:N",
                y=alt.Y("seconds:Q"), color="model:N",
                tooltip=["model:N", "percentile:N", "seconds:Q"])
        .properties(height=220)
    )
