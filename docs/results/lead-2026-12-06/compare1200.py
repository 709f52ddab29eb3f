"""shared_lead at the table's 1,200 SFT steps (seed 1): per harness and decoding, exact first
call of the plain model (the table's own HSA-SFT of seed 1) and the shared-lead one, and
lead - plain paired on the same cases (Bonett-Price 95%, exact McNemar); v2 - v1 per model."""
import json
from pathlib import Path
from hat_core.evaluation.call_metrics import paired_difference_interval, wilson
from hat_core.repro.aggregate import mcnemar_exact

W = Path("runs/lead")


def bits(model, harness, dec):
    rows = [json.loads(x) for x in open(W / "eval" / f"{model}-{harness}-{dec}.cases.jsonl")]
    rows.sort(key=lambda r: r["case_id"])
    return [r["case_id"] for r in rows], [bool(r["calls"]["first_call_exact"]) for r in rows]


def paired(xa, xb):
    a = sum(x and not y for x, y in zip(xa, xb))
    b = sum(y and not x for x, y in zip(xa, xb))
    lo, hi = paired_difference_interval(b, a, len(xa))
    return {"diff": round(100 * (b - a) / len(xa), 1), "interval": [round(100 * lo, 1), round(100 * hi, 1)],
            "gained": b, "lost": a, "p": mcnemar_exact(a, b)}


out = {}
for h in ("v1", "v2", "tool-names", "t2"):
    for d in ("free", "held"):
        ia, xa = bits("h1200-s1-p0.0", h, d)
        ib, xb = bits("h1200-s1-p0.5", h, d)
        assert ia == ib
        row = {"n": len(xa), "plain": round(100 * sum(xa) / len(xa), 1),
               "lead": round(100 * sum(xb) / len(xb), 1), "lead - plain": paired(xa, xb)}
        out[f"{h}/{d}"] = row
        print(f"{h:10s} {d:4s} n={len(xa):3d} plain {row['plain']:5.1f} lead {row['lead']:5.1f}  lead-plain {row['lead - plain']}")
for m in ("h1200-s1-p0.0", "h1200-s1-p0.5"):
    for d in ("free", "held"):
        _, x1 = bits(m, "v1", d)
        for h in ("v2", "tool-names"):
            _, x2 = bits(m, h, d)
            out[f"{m}/{d}/{h} - v1"] = r = paired(x1, x2)
            print(f"{m} {d}: {h} - v1 {r}")
(W / "compare1200.json").write_text(json.dumps(out, indent=1))
# the plain model is the table's own HSA-SFT of seed 1: its free case outcomes must match
table = json.load(open("docs/results/repro-1200-2026-12-06/s1/results.json"))
outcomes = table["seeds"]["1"]["eval"]["hsa_sft"]["outcomes"]
for suite, h in (("t1", "v1"), ("t2", "t2")):
    ids, x = bits("h1200-s1-p0.0", h, "free")
    ref = dict(zip(outcomes[suite]["case_ids"], outcomes[suite]["first_call_exact"]))
    same = all(ref[i] == v for i, v in zip(ids, x)) and set(ids) == set(ref)
    print(f"{suite}: plain model reproduces the table's seed-1 HSA-SFT case outcomes: {same}")
