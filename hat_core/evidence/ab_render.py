"""An `AbReport` as a markdown table (docs, console pages) or a rich table (the terminal)."""

from __future__ import annotations

import math

from rich.table import Table

from hat_core.evidence.ab import AbReport, MetricResult

COLUMNS = ("metric", "control mean", "treatment mean", "lift", "CI (Welch, delta)", "p",
           "p adj", "CI (bootstrap)", "CUPED var. red.", "days CI agrees", "days Q p",
           "verdict")


def _pct(x: float, signed: bool = True) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return f"{100 * x:+.2f}%" if signed else f"{100 * x:.1f}%"


def _p(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x:.2g}" if x < 0.001 else f"{x:.3f}"


def _ci(low: float, high: float) -> str:
    return "n/a" if math.isnan(low) or math.isnan(high) else f"[{_pct(low)}, {_pct(high)}]"


def metric_cells(m: MetricResult) -> list[str]:
    """One table row's cells for a metric, in `COLUMNS` order."""
    boot = _ci(m.bootstrap.ci_low, m.bootstrap.ci_high) if m.bootstrap else "off"
    cuped = _pct(m.cuped.variance_reduction, signed=False) if m.cuped else "-"
    s = m.stability
    days = "-" if s is None else f"{s.consistent_days}/{s.estimable_days}"
    q = "-" if s is None else _p(s.q_p_value)
    return [m.metric, f"{m.mean_control:.4g}", f"{m.mean_treatment:.4g}", _pct(m.welch.lift),
            _ci(m.welch.ci_low, m.welch.ci_high), _p(m.welch.p_value), _p(m.p_adjusted), boot,
            cuped, days, q, m.verdict]


def summary_lines(report: AbReport) -> list[str]:
    """Arms, SRM result, settings: the lines above the table."""
    s, c = report.srm, report.config
    srm = (f"SAMPLE RATIO MISMATCH (p = {_p(s.p_value)} < {s.threshold}): the assignment or "
           "logging is broken; do not act on these lifts" if s.mismatch else
           f"sample ratio ok (p = {_p(s.p_value)})")
    return [f"{report.treatment} vs {report.control}: {s.n_treatment} vs {s.n_control} users, "
            f"{len(report.days)} days; expected control share {s.expected_control_share:g}, "
            f"observed {s.observed_control_share:.4f}; {srm}",
            f"{100 * (1 - c.alpha):g}% intervals; correction {c.correction}; bootstrap "
            f"{c.bootstrap} resamples ({c.bootstrap_method}, seed {c.seed}); lift and CIs "
            "use CUPED-adjusted values where a variance reduction is shown (raw lift: --json)"]


def ab_markdown(report: AbReport) -> str:
    """The report as markdown: summary lines, then one table row per metric."""
    lines = [*summary_lines(report), "", "| " + " | ".join(COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(metric_cells(m)) + " |" for m in report.metrics]
    return "\n".join(lines)


def ab_table(report: AbReport) -> Table:
    """The report as a rich table (the summary lines are its caption)."""
    table = Table(title="A/B result", caption="\n".join(summary_lines(report)))
    for col in COLUMNS:
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right")
    for m in report.metrics:
        table.add_row(*metric_cells(m))
    return table
