"""The multi-seed aggregates of the reproduction table as markdown (part of `table.md`).

    text = aggregates_markdown(results)   # after hat_core.repro.report.write_outputs' tables

Three parts, each computed by `hat_core.repro.aggregate` from the arms' per-case outcomes:
pooled rates (k / n over every seed's cases, Wilson 95% interval, beside mean ± sample std
over seeds), paired tests between arms (the pairs of every seed pooled, McNemar's exact test
on the pooled discordant counts, the difference with its Bonett-Price interval) and
per-family breakdowns (T1 per scenario kind, T2 per held-out variant, IFEval per instruction
family) with their case counts and intervals.
"""

from __future__ import annotations

from hat_core.repro.aggregate import (
    PooledPaired,
    PooledRate,
    pooled_families,
    pooled_paired,
    pooled_rate,
)
from hat_core.repro.config import ARM_LABELS, ARMS

OUTCOME_LABELS = {"passed": "pass rate", "first_tool_right": "right first tool",
                  "first_call_exact": "exact first call", "all_calls_exact": "all calls exact",
                  "followed": "instructions followed", "prompts_passed": "prompts passed"}
SUITE_LABELS = {"t1": "T1", "t2": "T2", "t2_edit": "T2 (v2 edit)", "ifeval": "IFE-P"}
# the pooled table's columns: (suite, outcome)
POOLED_COLUMNS = (("t1", "first_call_exact"), ("t1", "passed"), ("t2", "first_call_exact"),
                  ("t2", "passed"), ("t2_edit", "first_call_exact"), ("t2_edit", "passed"),
                  ("ifeval", "passed"))
# the paired tests shown: (a, b, suite, outcome); results.json has every pair of arms
COMPARISONS = tuple(
    [("fixed_sft", b, s, o) for b in ("hsa_sft", "hat") for s in ("t1", "t2", "t2_edit")
     for o in ("first_call_exact", "passed")]
    + [("base", "fixed_sft", "ifeval", "passed"), ("base", "hsa_sft", "ifeval", "passed"),
       ("hsa_sft", "hsa_opd", "ifeval", "passed"),
       ("hsa_sft", "hsa_opd", "t2", "first_call_exact"),
       ("hsa_opd", "hat", "t1", "first_call_exact"),
       ("hsa_opd", "hat", "t2", "first_call_exact")])


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def rate_cell(r: PooledRate | None) -> str:
    """`mean ± std; k/n pooled (lo–hi)` in percent."""
    if r is None:
        return "—"
    spread = f"± {100 * r.std:.1f}" if r.std is not None else "(n=1)"
    return (f"{pct(r.mean)} {spread}; {r.hits}/{r.cases} = {pct(r.rate)} "
            f"({pct(r.interval[0])}–{pct(r.interval[1])})")


def pooled_markdown(results: dict) -> str:
    """One row per arm: each (suite, outcome) as mean ± std over seeds and pooled k/n with
    its Wilson interval."""
    cells = {(a, s, o): pooled_rate(results, a, s, o) for a in ARMS for s, o in POOLED_COLUMNS}
    if all(c is None for c in cells.values()):
        return ""
    head = "| Setting | " + " | ".join(
        f"{SUITE_LABELS[s]} {OUTCOME_LABELS[o]}" for s, o in POOLED_COLUMNS) + " |"
    rows = [f"| {_label(a)} | " + " | ".join(
        rate_cell(cells[(a, s, o)]) for s, o in POOLED_COLUMNS) + " |" for a in ARMS]
    return "\n".join([head, "|---|" + "---|" * len(POOLED_COLUMNS), *rows]) + "\n"


def paired_row(p: PooledPaired) -> str:
    return (f"| {SUITE_LABELS[p.suite]} | {OUTCOME_LABELS[p.outcome]} | {_label(p.a)} → "
            f"{_label(p.b)} | {p.cases} ({p.seeds} seeds) | {pct(p.a_rate)} | {pct(p.b_rate)} "
            f"| {100 * p.diff:+.1f} ({100 * p.diff_interval[0]:+.1f} to "
            f"{100 * p.diff_interval[1]:+.1f}) | {p.a_only} | {p.b_only} | {p.p_value:.2g} |")


def paired_markdown(results: dict, comparisons=COMPARISONS) -> str:
    """The shown comparisons, pooled over seeds (every pair of arms is in results.json)."""
    found = [p for a, b, s, o in comparisons if (p := pooled_paired(results, a, b, s, o))]
    if not found:
        return ""
    head = ("| suite | outcome | a → b | paired cases | a | b | b − a (95%) | a only | b only | "
            "McNemar p |")
    return "\n".join([head, "|---|---|---|---|---|---|---|---|---|---|",
                      *map(paired_row, found)]) + "\n"


def family_markdown(results: dict, key: str, outcome: str) -> str:
    """One row per family (kind, variant or instruction family), one column per arm:
    `k/n rate (lo–hi)` pooled over seeds ("" without data)."""
    tables = {a: pooled_families(results, a, key, outcome) for a in ARMS}
    groups = list(dict.fromkeys(g for t in tables.values() for g in t))
    if not groups:
        return ""
    head = "| family | " + " | ".join(_label(a) for a in ARMS) + " |"
    rows = [f"| {g} | " + " | ".join(
        f"{c['hits']}/{c['cases']} {pct(c['rate'])} ({pct(c['interval'][0])}–"
        f"{pct(c['interval'][1])})" if (c := tables[a].get(g)) else "—" for a in ARMS) + " |"
        for g in groups]
    return "\n".join([head, "|---|" + "---|" * len(ARMS), *rows]) + "\n"


FAMILY_TABLES = (("t1.kind", "first_call_exact", "T1 per scenario kind, exact first call"),
                 ("t1.kind", "passed", "T1 per scenario kind, pass rate"),
                 ("t2.variant", "first_call_exact",
                  "T2 per held-out variant (`variant@eval world`), exact first call"),
                 ("t2.variant", "passed", "T2 per held-out variant, pass rate"),
                 ("ifeval.family", "followed",
                  "IFEval per instruction family, instructions followed (strict)"),
                 ("ifeval.family", "prompts_passed",
                  "IFEval per instruction family, prompts carrying it that passed"))


def aggregates_markdown(results: dict) -> str:
    """The pooled table, the paired tests and the family tables, each with a title."""
    parts = [("Pooled over seeds (%: mean ± sample std over seeds; k/n over every seed's "
              "cases = pooled rate (Wilson 95% interval))", pooled_markdown(results)),
             ("Paired tests between arms (%, the same cases per seed, pairs pooled over "
              "seeds; McNemar's exact test on the pooled discordant counts)",
              paired_markdown(results))]
    parts += [(f"{title} (k/n pooled over seeds, %, Wilson 95%)",
               family_markdown(results, key, outcome))
              for key, outcome, title in FAMILY_TABLES]
    return "".join(f"\n{title}:\n\n{table}" for title, table in parts if table)


def _label(arm: str) -> str:
    return ARM_LABELS[arm]
