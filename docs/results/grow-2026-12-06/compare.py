"""Block expansion A/B: toy-long grown to 8 layers against toy-long, through the same `multi`
base and HSA arm. Per model: exact first call on v1 and v2, v2 - v1 paired, and grown - plain
paired on the same scenarios, for free and held decoding. Reads runs/grow/{grown,plain}."""
import json
from pathlib import Path

from hat_core.evaluation.call_metrics import paired_difference_interval
from hat_core.evaluation.errors import EvalInputError
from hat_core.evaluation.paired import read_case_rows
from hat_core.repro.aggregate import mcnemar_exact

W = Path("runs/grow")
MODELS = ("multi-base", "multi-hsa-300", "multi-hsa-600")
DECODING = {"free": "eval", "held": "eval-constrained"}


def bits(arm, model, week, dec):
    rows = read_case_rows(W / arm / DECODING[dec] / f"{model}-{week}.cases.jsonl")
    rows = sorted(rows, key=lambda r: r["scenario_id"])
    return [r["scenario_id"] for r in rows], [bool(r["calls"]["first_call_exact"]) for r in rows]


def paired(before, after):
    gained = sum(b and not a for a, b in zip(before, after))
    lost = sum(a and not b for a, b in zip(before, after))
    lo, hi = paired_difference_interval(gained, lost, len(before))
    return {"diff": (gained - lost) / len(before), "interval": [lo, hi], "gained": gained,
            "lost": lost, "p": mcnemar_exact(lost, gained)}


def pct(x):
    return f"{100 * x:+.1f}"


def cell(d):
    return (f"{pct(d['diff'])} ({pct(d['interval'][0])}, {pct(d['interval'][1])}); "
            f"{d['gained']} / {d['lost']}")


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
        out[f"{model}/{dec}"] = row
        print(f"{model:14s} {dec:4s} plain {100 * row['plain']['v1']:.1f} -> "
              f"{100 * row['plain']['v2']:.1f} [{cell(row['plain']['v2-v1'])}]  grown "
              f"{100 * row['grown']['v1']:.1f} -> {100 * row['grown']['v2']:.1f} "
              f"[{cell(row['grown']['v2-v1'])}]")
        print(f"{'':19s} grown - plain: v1 {cell(row['grown-plain/v1'])}; "
              f"v2 {cell(row['grown-plain/v2'])}")
Path(__file__).with_name("compare.json").write_text(json.dumps(out, indent=1) + "\n")
