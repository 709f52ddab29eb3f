"""Two evaluation runs' per-case rows, and a repro aggregate run, shaped for the Compare page
(no Streamlit).

    rates, paired, notes = case_stats(rows_a, rows_b, a_label="A: v3", b_label="B: v4")
    pooled, tests = aggregate_rows(aggregates)     # a `repro aggregate` run's aggregates.json

Rows are a suite run's case rows (`*.cases.jsonl`). For every suite and outcome both sides
carry (`passed`, and the call metrics `first_tool_right`, `first_call_exact`,
`all_calls_exact` of the simulator suites), each side's rate is shown as `k/n = x%` with its
Wilson 95% interval (`call_metrics.wilson`). When both runs played the same cases of a suite
(same case ids), the paired test runs on them: `paired.compare_cases` (McNemar's exact p on
the discordant cases) and the difference b - a with its Bonett-Price interval
(`call_metrics.paired_difference_interval`, as the release gates use it). A suite whose cases
differ is not paired; a note says why. Every paired row ends with a verdict read the way
the release gates read one (`hat_core.release.evidence.decide`, a superiority test with no
tolerance): `b better` or `a better` only when McNemar's p is below `alpha` on at least
`min_cases` paired cases (the gates' defaults, 30 and 0.05), else `inconclusive` and why
(too few cases, no case that tells them apart, or p >= alpha). The statistics all live in
`hat_core.evaluation`; this module only pairs rows up and formats cells.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hat_core.evaluation.call_metrics import CASE_RATES, paired_difference_interval, wilson
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.paired import compare_cases
from hat_core.release.evidence import decide
from hat_core.release.gates import GateConfig
from hat_core.release.verdict import FAILED, PASSED

OUTCOMES = ("passed", *CASE_RATES)
MIN_CASES, ALPHA = GateConfig.min_cases, GateConfig.alpha  # the release gates' defaults


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def rate_cell(k: int, n: int) -> str:
    """`k/n = x% (lo–hi)`, the Wilson 95% interval in percent."""
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {pct(k / n if n else 0.0)}% ({pct(lo)}–{pct(hi)})"


def verdict_cell(n: int, a_only: int, b_only: int, p_value: float, *,
                 min_cases: int = MIN_CASES, alpha: float = ALPHA) -> str:
    """`b better`, `a better` or `inconclusive: <why>` for `n` paired cases of which
    `a_only` only a and `b_only` only b got right, by the release gates' rule (module doc)."""
    gain = (b_only - a_only) / n if n else 0.0
    verdict, _ = decide(n=n, discordant=a_only + b_only, gain=gain, p_value=p_value,
                        tolerance=0.0, min_cases=min_cases, alpha=alpha)
    if verdict == PASSED:
        return "b better"
    if verdict == FAILED:
        return "a better"
    if n < min_cases:
        return f"inconclusive: {n} cases < {min_cases}"
    if a_only + b_only == 0:
        return "inconclusive: no case tells them apart"
    return f"inconclusive: p ≥ {alpha:g}"


def outcome_rows(rows: Sequence[Mapping], suite: str, outcome: str) -> list[dict]:
    """`{case_id, passed}` of `suite`'s rows for `outcome` (the shape `compare_cases` pairs;
    IFEval rows without a case id are keyed `ifeval/<key>`); empty when a row lacks it."""
    out = []
    for row in rows:
        if row.get("suite") != suite:
            continue
        holder = row.get("calls", {}) if outcome in CASE_RATES else row
        if outcome not in holder:
            return []
        case_id = row.get("case_id") or f"{suite}/{row.get('key')}"
        out.append({"case_id": case_id, "passed": bool(holder[outcome])})
    return out


def suites_of(rows: Sequence[Mapping]) -> list[str]:
    """The suites of `rows`, in first-seen order."""
    return list(dict.fromkeys(str(r["suite"]) for r in rows if "suite" in r))


def case_stats(rows_a: Sequence[Mapping], rows_b: Sequence[Mapping], *, a_label: str,
               b_label: str, min_cases: int = MIN_CASES, alpha: float = ALPHA
               ) -> tuple[list[dict], list[dict], list[str]]:
    """(rate rows, paired rows, notes) of the two runs (see the module doc); `min_cases`
    and `alpha` set the paired rows' verdicts."""
    rates, paired, notes = [], [], []
    for suite in [s for s in suites_of(rows_a) if s in suites_of(rows_b)]:
        for outcome in OUTCOMES:
            a, b = outcome_rows(rows_a, suite, outcome), outcome_rows(rows_b, suite, outcome)
            if not a or not b:
                continue
            ka, kb = sum(c["passed"] for c in a), sum(c["passed"] for c in b)
            rates.append({"suite": suite, "outcome": outcome, a_label: rate_cell(ka, len(a)),
                          b_label: rate_cell(kb, len(b))})
            try:
                cmp = compare_cases(a, b, metric="passed")
            except EvalInputError as exc:
                if outcome == "passed":
                    notes.append(f"{suite}: not paired, {exc}")
                continue
            lo, hi = paired_difference_interval(cmp.b_only, cmp.a_only, cmp.n)
            paired.append({"suite": suite, "outcome": outcome, "paired cases": cmp.n,
                           "b − a (points)": round(100 * cmp.diff, 1),
                           "95% interval": f"{100 * lo:+.1f} to {100 * hi:+.1f}",
                           "a only": cmp.a_only, "b only": cmp.b_only,
                           "McNemar p": round(cmp.p_value, 4),
                           "verdict": verdict_cell(cmp.n, cmp.a_only, cmp.b_only, cmp.p_value,
                                                   min_cases=min_cases, alpha=alpha)})
    return rates, paired, notes


def aggregate_rows(agg: Mapping, labels: Mapping[str, str] | None = None, *,
                   min_cases: int = MIN_CASES, alpha: float = ALPHA
                   ) -> tuple[list[dict], list[dict]]:
    """A repro aggregate's pooled rates (one row per arm, suite and outcome: mean ± std over
    seeds, pooled k/n with its Wilson interval) and its paired tests (b - a pooled over seeds,
    its interval, McNemar p), from `aggregates.json` (`hat_core.repro.aggregate.aggregates`)."""
    name = (lambda arm: labels.get(arm, arm)) if labels else (lambda arm: arm)
    pooled = []
    for arm, rates in agg.get("pooled", {}).items():
        for key, r in rates.items():
            spread = f"± {pct(r['std'])}" if r.get("std") is not None else "(n=1)"
            lo, hi = r["interval"]
            pooled.append({"arm": name(arm), "rate": key, "seeds": len(r["per_seed"]),
                           "mean ± std (%)": f"{pct(r['mean'])} {spread}",
                           "pooled": f"{r['hits']}/{r['cases']} = {pct(r['rate'])}% "
                                     f"({pct(lo)}–{pct(hi)})"})
    tests = []
    for p in agg.get("paired", []):
        lo, hi = p.get("diff_interval") or (None, None)
        tests.append({"a → b": f"{name(p['a'])} → {name(p['b'])}", "suite": p["suite"],
                      "outcome": p["outcome"], "paired cases": p["cases"],
                      "seeds": p["seeds"], "a (%)": pct(p["a_rate"]), "b (%)": pct(p["b_rate"]),
                      "b − a (points)": round(100 * p["diff"], 1),
                      "95% interval": "—" if lo is None else
                      f"{100 * lo:+.1f} to {100 * hi:+.1f}",
                      "a only": p["a_only"], "b only": p["b_only"],
                      "McNemar p": round(p["p_value"], 4),
                      "verdict": verdict_cell(p["cases"], p["a_only"], p["b_only"],
                                              p["p_value"], min_cases=min_cases, alpha=alpha)})
    return pooled, tests


def parse_cases_ref(text: str) -> tuple[str, str | None]:
    """`runs:/RUN/PATH` (an eval result's `cases_uri`), `RUN:PATH` or `RUN` -> (run id,
    artifact path or None: the run's only cases file)."""
    from hat_core.evidence.run_cases import parse_run_ref

    text = text.strip()
    if text.startswith("runs:/"):
        run_id, _, path = text.removeprefix("runs:/").partition("/")
        return run_id, path or None
    return parse_run_ref(text)


def load_rows(uri: str, ref: str) -> list[dict]:
    """The case rows of the run named by `ref` (`parse_cases_ref`) in the MLflow store `uri`;
    a run or file that cannot be read raises a `HatError` naming it."""
    from hat_core.evidence.run_cases import load_run_cases

    run_id, artifact = parse_cases_ref(ref)
    return list(load_run_cases(uri, run_id, artifact).rows)


def cases_ref(results: Sequence) -> str:
    """The first `cases_uri` of a model version's eval results ('' when none has one)."""
    return next((r.cases_uri for r in results if getattr(r, "cases_uri", "")), "")
