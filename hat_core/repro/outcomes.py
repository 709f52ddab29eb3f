"""An arm's played cases, condensed for `results.json`: per-case outcomes and family counts.

    outcomes = case_outcomes(rows)     # {"t1": {"case_ids": [...], "passed": "0110", ...}}
    families = family_counts(rows)     # {"t1.kind": {"price": {"cases": 3, "passed": 1, ...}}}

`rows` are the case rows of one arm's evaluation (`hat_core.evaluation.evaluate.case_rows`,
plus the edit rows). The case files stay on disk beside the run; these two condensed views
travel in `results.json`, so a merged or moved results file still carries what the report
computes from cases: pooled rates over seeds with their intervals, paired tests between arms
on the same cases (`hat_core.repro.aggregate`), and per-family breakdowns.

Per-case outcomes are one character per case (`1` right, `0` not), in the order of
`case_ids`, for each outcome of `OUTCOMES` the suite's rows carry (`passed` everywhere, the
call metrics of `hat_core.evaluation.call_metrics` on the simulator suites). Family counts
are: T1 per scenario kind (`t1.kind`), T2 per held-out variant (`t2.variant`, with the
variant's transforms), IFEval per instruction family (`ifeval.family`, the instruction id's
prefix before `:`; counted per instruction, beside the prompts that carry the family).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from hat_core.evaluation.call_metrics import CASE_RATES

# suites whose cases are kept for paired tests and pooled intervals
PAIRED_SUITES = ("t1", "t2", "t2_edit", "ifeval")
OUTCOMES = ("passed", *CASE_RATES)


def case_outcomes(rows: Iterable[Mapping], suites: Sequence[str] = PAIRED_SUITES
                  ) -> dict[str, dict]:
    """Per suite: its case ids and one `0`/`1` string per outcome (see the module doc)."""
    out: dict[str, dict] = {}
    for row in rows:
        suite = row.get("suite")
        if suite not in suites or "case_id" not in row:
            continue
        entry = out.setdefault(suite, {"case_ids": []})
        entry["case_ids"].append(row["case_id"])
        for name in OUTCOMES:
            value = row["passed"] if name == "passed" else row.get("calls", {}).get(name)
            if value is not None:
                entry[name] = entry.get(name, "") + ("1" if value else "0")
    return out


def hits(bits: str) -> tuple[int, int]:
    """(cases right, cases) of an outcome string."""
    return bits.count("1"), len(bits)


def family_counts(rows: Iterable[Mapping]) -> dict[str, dict[str, dict]]:
    """T1 per scenario kind, T2 per variant and IFEval per instruction family (module doc)."""
    rows = list(rows)
    return {"t1.kind": _sim_groups(rows, "t1", "kind"),
            "t2.variant": _sim_groups(rows, "t2", "variant_id"),
            "ifeval.family": _ifeval_families(rows)}


def instruction_family(instruction_id: str) -> str:
    """`length_constraints:number_words` -> `length_constraints`."""
    return instruction_id.split(":", 1)[0]


def _sim_groups(rows: Sequence[Mapping], suite: str, key: str) -> dict[str, dict]:
    """Cases and hits of each outcome per value of `row[key]`, in first-seen order."""
    out: dict[str, dict] = {}
    for row in rows:
        if row.get("suite") != suite:
            continue
        group = out.setdefault(str(row[key]), {"cases": 0, **{n: 0 for n in OUTCOMES}})
        if key == "variant_id":
            group["transforms"] = list(row.get("transforms", []))
        group["cases"] += 1
        group["passed"] += bool(row["passed"])
        for name in CASE_RATES:
            group[name] += bool(row.get("calls", {}).get(name))
    return out


def _ifeval_families(rows: Sequence[Mapping]) -> dict[str, dict]:
    """Per family: instructions and those followed (strict), prompts carrying it and those
    passed (every instruction of the prompt followed)."""
    out: dict[str, dict] = {}
    for row in rows:
        if row.get("suite") != "ifeval":
            continue
        seen = set()
        for iid, ok in zip(row["instruction_id_list"], row["strict_instructions"], strict=True):
            family = out.setdefault(instruction_family(iid), {
                "instructions": 0, "followed": 0, "prompts": 0, "prompts_passed": 0})
            family["instructions"] += 1
            family["followed"] += bool(ok)
            if instruction_family(iid) not in seen:
                seen.add(instruction_family(iid))
                family["prompts"] += 1
                family["prompts_passed"] += bool(row["passed"])
    return dict(sorted(out.items()))
