"""Block expansion, second replicate (`--seed 1`) and both replicates pooled: toy-long grown to
8 layers against toy-long through the same `multi` base and HSA arm. Per model and decoding:
exact first call on v1 and v2, v2 - v1 paired, grown - plain paired on the same scenarios.
The pool adds each replicate's discordant pairs (2 x 45 pairs on the same 45 scenarios, as
the earlier pooled tables do). Reads runs/grow-s1 and ../grow-2026-12-06/compare.json."""
import json
from pathlib import Path

from hat_core.evaluation.call_metrics import paired_difference_interval
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.paired import read_case_rows
from hat_core.repro.aggregate import mcnemar_exact

HERE = Path(__file__).resolve().parent
W = Path("runs/grow-s1")
FIRST = json.loads((HERE.parent / "grow-2026-12-06" / "compare.json").read_text())
MODELS = ("multi-base", "multi-hsa-300", "multi-hsa-600")
DECODING = {"free": "eval", "held": "eval-constrained"}


def bits(arm, model, week, dec):
    rows = read_case_rows(W / arm / DECODING[dec] / f"{model}-{week}.cases.jsonl")
    rows = sorted(rows, key=lambda r: r["scenario_id"])
    return [r["scenario_id"] for r in rows], [bool(r["calls"]["first_call_exact"]) for r in rows]


def counts(gained, lost, n):
    lo, hi = paired_difference_interval(gained, lost, n)
    return {"diff": (gained - lost) / n, "interval": [lo, hi], "gained": gained, "lost": lost,
            "n": n, "p": mcnemar_exact(lost, gained)}


def paired(before, after):
    return counts(sum(b and not a for a, b in zip(before, after, strict=True)),
                  sum(a and not b for a, b in zip(before, after, strict=True)), len(before))


def pooled(a, b):
    return counts(a["gained"] + b["gained"], a["lost"] + b["lost"], a.get("n", 45) + b["n"])


def pct(x):
    return f"{100 * x:+.1f}"


def cell(d):
    return (f"{pct(d['diff'])} ({pct(d['interval'][0])}, {pct(d['interval'][1])}); "
            f"{d['gained']} / {d['lost']}, p = {d['p']:.3f}")


out = {}
for model in MODELS:
    for dec in DECODING:
        row = {}
        try:
            for arm in ("plain", "grown"):
                ids1, x1 = bits(arm, model, "v1", dec)
                ids2, x2 = bits(arm, model, "v2", dec)
                assert ids1 == ids2
                row[arm] = {"v1": sum(x1) / len(x1), "v2": sum(x2) / len(x2),
                            "v2-v1": paired(x1, x2), "x": (x1, x2)}
        except EvalInputError:  # not evaluated (yet)
            continue
        for week, i in (("v1", 0), ("v2", 1)):
            row[f"grown-plain/{week}"] = paired(row["plain"]["x"][i], row["grown"]["x"][i])
        for arm in ("plain", "grown"):
            del row[arm]["x"]
        first = FIRST.get(f"{model}/{dec}")
        if first:
            row["pooled"] = {key: pooled(first[key], row[key]) for key in
                             ("grown-plain/v1", "grown-plain/v2")}
            row["pooled"].update({f"{arm}/v2-v1": pooled(first[arm]["v2-v1"], row[arm]["v2-v1"])
                                  for arm in ("plain", "grown")})
        out[f"{model}/{dec}"] = row
        print(f"{model:14s} {dec:4s} seed 1: plain {100 * row['plain']['v1']:.1f} -> "
              f"{100 * row['plain']['v2']:.1f} [{cell(row['plain']['v2-v1'])}]  grown "
              f"{100 * row['grown']['v1']:.1f} -> {100 * row['grown']['v2']:.1f} "
              f"[{cell(row['grown']['v2-v1'])}]")
        print(f"{'':19s} seed 1 grown - plain: v1 {cell(row['grown-plain/v1'])}; "
              f"v2 {cell(row['grown-plain/v2'])}")
        if first:
            pool = row["pooled"]
            print(f"{'':19s} pooled grown - plain: v1 {cell(pool['grown-plain/v1'])}; "
                  f"v2 {cell(pool['grown-plain/v2'])}")
            print(f"{'':19s} pooled v2 - v1: plain {cell(pool['plain/v2-v1'])}; "
                  f"grown {cell(pool['grown/v2-v1'])}")
HERE.joinpath("compare.json").write_text(json.dumps(out, indent=1) + "\n")
