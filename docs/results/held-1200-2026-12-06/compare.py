"""Free decoding against held calls (`--constrain-tools`) on the 1,200-step table's cases,
seeds 1 and 2: each free run must reproduce the table's own outcomes; then held - free and
HSA - Fixed, paired on the same cases, pooled over the seeds."""
import json
from pathlib import Path
from hat_core.evaluation.call_metrics import paired_difference_interval
from hat_core.repro.aggregate import mcnemar_exact
R = json.load(open('docs/results/results.json'))
SUITES = {"t2": ("{s}-{arm}-{d}", "t2"), "t1 (v1)": ("{s}-{arm}-{d}-t1-v1", "t1"),
          "t2 (v2 edit)": ("{s}-{arm}-{d}-t1-v2", "t2_edit")}
def bits(path, outcome):
    rows = [json.loads(l) for l in open(path)]
    return {r['scenario_id'] + '/' + (r.get('variant_id') or ''): bool(r['calls'][outcome]) if outcome in r['calls'] else bool(r[outcome]) for r in rows}
def table_bits(s, arm, suite, outcome):
    o = R['seeds'][s]['eval'][arm]['outcomes'][suite]
    return [c == '1' for c in o[outcome]]
def pair(a, b):
    g = sum(1 for k in a if b[k] and not a[k]); l = sum(1 for k in a if a[k] and not b[k]); n = len(a)
    lo, hi = paired_difference_interval(g, l, n)
    return dict(n=n, a=sum(a.values()) / n, b=sum(b.values()) / n, diff=(g - l) / n, low=lo, high=hi, b_only=g, a_only=l, p=mcnemar_exact(l, g))
def fmt(x):
    return f"n={x['n']} {100*x['a']:.1f} -> {100*x['b']:.1f} {100*x['diff']:+.1f} ({100*x['low']:+.1f},{100*x['high']:+.1f}) {x['a_only']}/{x['b_only']} p={x['p']:.2g}"
out = {}
for name, (pattern, suite) in SUITES.items():
    for outcome in ('first_call_exact', 'passed'):
        got = {}
        for arm, folder in (('hsa_sft', 'hsa_sft'), ('fixed_sft', 'fixed_sft'), ('hat', 'hat_rl')):
            for d in ('free', 'held'):
                merged = {}
                for s in ('1', '2'):
                    p = Path('runs/held/' + pattern.format(s='s' + s, arm=folder, d=d) + '.cases.jsonl')
                    if not p.is_file():
                        merged = None; break
                    b = bits(p, outcome)
                    if d == 'free':
                        assert list(b.values()) == table_bits(s, arm, suite, outcome), (name, arm, s, outcome)
                    merged |= {s + ':' + k: v for k, v in b.items()}
                if merged is not None:
                    got[(arm, d)] = merged
        for label, a, b in [("HSA held - free", ('hsa_sft', 'free'), ('hsa_sft', 'held')),
                            ("Fixed held - free", ('fixed_sft', 'free'), ('fixed_sft', 'held')),
                            ("HSA - Fixed, free", ('fixed_sft', 'free'), ('hsa_sft', 'free')),
                            ("HSA - Fixed, held", ('fixed_sft', 'held'), ('hsa_sft', 'held')),
                            ("HAT held - free", ('hat', 'free'), ('hat', 'held')),
                            ("HAT - Fixed, free", ('fixed_sft', 'free'), ('hat', 'free')),
                            ("HAT - Fixed, held", ('fixed_sft', 'held'), ('hat', 'held'))]:
            if a in got and b in got:
                x = pair(got[a], got[b]); out[f"{name} {outcome} {label}"] = x
                print(f"{name:13s} {outcome:16s} {label:18s} {fmt(x)}")
json.dump(out, open('runs/held/compare.json', 'w'), indent=1)
