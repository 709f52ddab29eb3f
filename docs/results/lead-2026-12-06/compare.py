"""shared_lead A/B: per model, exact first call on v1, v2 and v2's tool renames (free, held),
and lead - plain paired on the same scenarios, pooled over the training seeds given."""
import json, sys
from collections import Counter
from pathlib import Path
from hat_core.evaluation.call_metrics import paired_difference_interval, wilson
from hat_core.evaluation.paired import read_case_rows
from hat_core.repro.aggregate import mcnemar_exact

W = Path("runs/lead")
SEEDS = sys.argv[1:] or ["7"]


def bits(model, harness, dec):
    rows = read_case_rows(W / "eval" / f"{model}-{harness}-{dec}.cases.jsonl")
    rows = sorted(rows, key=lambda r: r["scenario_id"])
    return [r["scenario_id"] for r in rows], [bool(r["calls"]["first_call_exact"]) for r in rows]


def pct(x):
    return f"{100 * x:+.1f}"


out = {}
for harness in ("v1", "v2", "tool-names"):
    for dec in ("free", "held"):
        a_only = b_only = n = 0
        line = []
        for s in SEEDS:
            try:
                ida, xa = bits(f"m-s{s}-p0.0", harness, dec)
                idb, xb = bits(f"m-s{s}-p0.5", harness, dec)
            except FileNotFoundError:
                continue
            assert ida == idb
            line.append(f"s{s}: plain {100*sum(xa)/len(xa):.1f} lead {100*sum(xb)/len(xb):.1f}")
            a_only += sum(a and not b for a, b in zip(xa, xb))
            b_only += sum(b and not a for a, b in zip(xa, xb))
            n += len(xa)
        if not n:
            continue
        lo, hi = paired_difference_interval(b_only, a_only, n)
        d = (b_only - a_only) / n
        out[f"{harness}/{dec}"] = {"n": n, "lead_only": b_only, "plain_only": a_only,
                                   "diff": d, "interval": [lo, hi],
                                   "p": mcnemar_exact(a_only, b_only), "per_seed": line}
        print(f"{harness:10s} {dec:4s} n={n:3d} lead-plain {pct(d)} ({pct(lo)}, {pct(hi)}) "
              f"{b_only}/{a_only} p={mcnemar_exact(a_only, b_only):.2g} | " + "; ".join(line))
# drops against v1 per model (v2 - v1), paired
for s in SEEDS:
    for p in ("0.0", "0.5"):
        for dec in ("free", "held"):
            try:
                _, x1 = bits(f"m-s{s}-p{p}", "v1", dec)
                _, x2 = bits(f"m-s{s}-p{p}", "v2", dec)
            except FileNotFoundError:
                continue
            g = sum(b and not a for a, b in zip(x1, x2)); l = sum(a and not b for a, b in zip(x1, x2))
            lo, hi = paired_difference_interval(g, l, len(x1))
            print(f"s{s} p{p} {dec}: v2 - v1 {pct((g-l)/len(x1))} ({pct(lo)}, {pct(hi)})")
            out[f"s{s}-p{p}/{dec}/v2-v1"] = {"diff": (g - l) / len(x1), "interval": [lo, hi]}
(W / "compare.json").write_text(json.dumps(out, indent=1))
