"""A/B analyses for the console: analyse an uploaded file, the lift table, the interval chart.

Everything here works on `AbReport.to_dict()` (a fresh analysis and a saved one render the
same way). `analyze_upload` writes the uploaded bytes to a temporary file with the upload's
suffix and reads it with `hat_core.evidence.loader.load_ab`, so a broken file lists every
problem (column, line) exactly as `hat ab analyze` does.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import altair as alt
from sqlalchemy.orm import Session

from db.ab_repo import save_ab_analysis
from db.values import AbAnalysis, User
from hat_core.errors import HatError, Problem
from ui.auth import require

SUFFIXES = ("csv", "parquet", "pq")
_KEYS = ("user_id", "arm", "day")


@dataclass(frozen=True)
class AbUpload:
    """An analysed upload: the file's name and sha256, its size, and the report's dict."""

    filename: str
    sha256: str
    n_rows: int
    n_users: int
    result: dict


def upload_columns(filename: str, raw: bytes) -> tuple[list[str], list[str]]:
    """(metric columns, arm labels) of an uploaded table, to offer as choices."""
    from hat_core.evidence.loader import read_table

    with _as_file(filename, raw) as path:
        frame, _ = read_table(path)
    columns = [c for c in frame.columns if c not in _KEYS and not str(c).endswith("_pre")]
    arms = sorted(str(a) for a in frame["arm"].unique()) if "arm" in frame else []
    return columns, arms


def analyze_upload(filename: str, raw: bytes, *, control: str, treatment: str,
                   metrics: list[str] | None, config) -> AbUpload:
    """Validate and analyse the upload (`config` is an `AbConfig`); `AbDataError` if unusable."""
    from hat_core.evidence.ab import analyze
    from hat_core.evidence.ab_data import USER
    from hat_core.evidence.loader import load_ab

    with _as_file(filename, raw) as path:
        data = load_ab(path, control=control, treatment=treatment, metrics=metrics or None)
    report = analyze(data, config)
    return AbUpload(filename, hashlib.sha256(raw).hexdigest(), len(data.frame),
                    int(data.frame[USER].nunique()), report.to_dict())


def save_upload(session: Session, *, user: User, upload: AbUpload, name: str) -> AbAnalysis:
    """Store the analysis (operators and admins)."""
    require(user.role, "evidence.save")
    return save_ab_analysis(session, name=name, source_name=upload.filename,
                            source_sha256=upload.sha256, result=upload.result,
                            n_rows=upload.n_rows, n_users=upload.n_users, actor=user.name)


def lift_rows(result: dict) -> list[dict]:
    """One table row per metric: lift, both CIs and p-values, adjusted p, CUPED, stability."""
    rows = []
    for m in result["metrics"]:
        welch, boot, st = m["welch"], m["bootstrap"] or {}, m["stability"] or {}
        rows.append({
            "metric": m["metric"], "users (c / t)": f"{m['n_control']} / {m['n_treatment']}",
            "lift": _pct(welch["lift"]),
            "95% CI (Welch)": f"[{_pct(welch['ci_low'])}, {_pct(welch['ci_high'])}]",
            "p (Welch)": _p(welch["p_value"]), "p adjusted": _p(m["p_adjusted"]),
            "CI (bootstrap)": (f"[{_pct(boot.get('ci_low'))}, {_pct(boot.get('ci_high'))}]"
                               if boot else "off"),
            "p (bootstrap)": _p(boot.get("p_value")) if boot else "off",
            "CUPED var. red.": _share((m["cuped"] or {}).get("variance_reduction")),
            "days agreeing": (f"{st.get('consistent_days')}/{st.get('estimable_days')}"
                              if st else "-"),
            "Q p (days)": _p(st.get("q_p_value")) if st else "-",
            "verdict": m["verdict"],
        })
    return rows


def srm_line(result: dict) -> tuple[bool, str]:
    """(mismatch?, a sentence about the arm sizes against the expected split)."""
    srm = result["srm"]
    text = (f"Users: {srm['n_control']} control, {srm['n_treatment']} treatment; control share "
            f"{srm['observed_control_share']:.3f} against the expected "
            f"{srm['expected_control_share']:.3f} (chi-square p = {_p(srm['p_value'])}).")
    return bool(srm["mismatch"]), text


def interval_points(result: dict) -> list[dict]:
    """{metric, method, lift, low, high} for the interval chart (overall lifts)."""
    out = []
    for m in result["metrics"]:
        for est in (m["welch"], m["bootstrap"]):
            if est and est.get("ci_low") is not None and est.get("lift") is not None:
                out.append({"metric": m["metric"], "method": est["method"], "lift": est["lift"],
                            "low": est["ci_low"], "high": est["ci_high"]})
    return out


def day_points(result: dict) -> list[dict]:
    """{metric, day, lift, low, high} of every estimable day."""
    return [{"metric": m["metric"], "day": str(d["day"]), "lift": d["lift"],
             "low": d["ci_low"], "high": d["ci_high"]}
            for m in result["metrics"] for d in (m["stability"] or {}).get("days", [])
            if d.get("lift") is not None and d.get("ci_low") is not None]


def interval_chart(points: list[dict], *, row: str = "method", title: str = "") -> alt.Chart:
    """Relative lift with its CI as a point and a rule per row, a zero line, one panel a metric."""
    base = alt.Chart(alt.Data(values=points))
    y = alt.Y(f"{row}:N", title=None, axis=alt.Axis(labelLimit=220))
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title="relative lift", axis=alt.Axis(format="%")), x2="high:Q", y=y)
    dots = base.mark_point(filled=True, size=60).encode(
        x="lift:Q", y=y, tooltip=["metric:N", f"{row}:N", alt.Tooltip("lift:Q", format=".2%"),
                                  alt.Tooltip("low:Q", format=".2%"),
                                  alt.Tooltip("high:Q", format=".2%")])
    zero = base.mark_rule(strokeDash=[4, 4], color="gray").encode(x=alt.datum(0))
    return (alt.layer(bars, dots, zero).properties(height=alt.Step(22), width=420)
            .facet(row=alt.Row("metric:N", title=None,
                               header=alt.Header(labelAngle=0, labelAlign="left",
                                                 labelFontWeight="bold")),
                   title=title))


def problems_of(exc: HatError) -> list[Problem]:
    """The problems of an unusable file, for `st.error` (at most 20, then a count)."""
    extra = len(exc.problems) - 20
    return exc.problems[:20] + ([Problem("", f"... and {extra} more")] if extra > 0 else [])


@contextmanager
def _as_file(filename: str, raw: bytes) -> Iterator[Path]:
    """The uploaded bytes as a temporary file with the upload's name (removed afterwards)."""
    with tempfile.TemporaryDirectory(prefix="hat-ab-") as tmp:
        path = Path(tmp) / (Path(filename).name or "upload.csv")
        path.write_bytes(raw)
        yield path


def _pct(x) -> str:
    return "-" if x is None else f"{x:+.2%}"


def _share(x) -> str:
    return "-" if x is None else f"{x:.1%}"


def _p(x) -> str:
    if x is None:
        return "-"
    return f"{x:.2g}" if x < 0.001 else f"{x:.3f}"
