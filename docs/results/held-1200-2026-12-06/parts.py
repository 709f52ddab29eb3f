"""HSA-SFT (1,200 steps, seeds 1, 2), held calls: each single change of v2 against v1, paired."""
import json
from pathlib import Path
from hat_core.evaluation.call_metrics import paired_difference_interval
from hat_core.repro.aggregate import mcnemar_exact
def bits(p):
    return {r['scenario_id']: bool(r['calls']['first_call_exact']) for r in map(json.loads, open(p))}
def pooled(name):
    out = {}
    for s in ('1', '2'):
        out |= {s + ':' + k: v for k, v in bits(Path(f'runs/held/s{s}-hsa_sft-held-{name}.cases.jsonl')).items()}
    return out
v1 = pooled('t1-v1')
res = {}
for part in ('t1-v2', 'part-tool-names', 'part-parameter-names', 'part-skill-names', 'part-descriptions', 'part-tool-order', 'part-all-but-the-renames'):
    try:
        b = pooled(part)
    except FileNotFoundError:
        continue
    g = sum(1 for k in v1 if b[k] and not v1[k]); l = sum(1 for k in v1 if v1[k] and not b[k]); n = len(v1)
    lo, hi = paired_difference_interval(g, l, n)
    res[part] = dict(n=n, rate=sum(b.values()) / n, diff=(g - l) / n, low=lo, high=hi, gained=g, lost=l, p=mcnemar_exact(l, g))
    print(f"{part:26s} {100*sum(b.values())/n:5.1f}  v1 {100*sum(v1.values())/n:.1f}  {100*(g-l)/n:+.1f} ({100*lo:+.1f},{100*hi:+.1f}) lost {l} gained {g} p={mcnemar_exact(l, g):.2g}")
json.dump(res, open('runs/held/parts.json', 'w'), indent=1)
