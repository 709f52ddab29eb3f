"""The anchored plan against the plain one: exact first call on v1 and v2 (T1, 90 scenarios),
v2 - v1 paired per model, anchored - plain paired per week, and the cases right per scenario
kind (6 scenarios each). Reads WORK/eval (default runs/anc) and writes compare.json here.

    .venv/bin/python docs/results/anchored-2026-12-07/compare.py
"""

from __future__ import annotations

import collections
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

from demo_base import change, exact, misses, renamed_away, share  # noqa: E402

from hat_core.evaluation.paired import read_case_rows  # noqa: E402

WORK = Path(os.environ.get("W", ROOT / "runs" / "anc"))
HARNESSES = ROOT / "examples" / "harnesses"
PAIRS = {"300": ("sft-plain", "sft-anchored", 300), "600": ("sft-plain", "sft-anchored", 600),
         "opaque 1.0, 600": ("sft-op-plain", "sft-op-anchored", 600)}


def tag(run: str, step: int) -> str:
    return f"{run}-checkpoints-checkpoint-{step}"


def by_kind(rows: list[dict]) -> dict[str, int]:
    right = collections.Counter()
    for row in rows:
        right[row["scenario_id"].split("-", 1)[1]] += bool(row["calls"]["first_call_exact"])
    return dict(sorted(right.items()))


def main() -> None:
    stale = renamed_away(HARNESSES / "v1.yaml", HARNESSES / "v2.yaml")
    rows = {f.name.removesuffix(".cases.jsonl"): read_case_rows(f)
            for f in sorted((WORK / "eval").glob("*.cases.jsonl"))}
    out: dict = {"models": {}, "anchored - plain": {}}
    for name in sorted({k.rsplit("-", 1)[0] for k in rows}):
        v1, v2 = rows.get(f"{name}-v1"), rows.get(f"{name}-v2")
        if not (v1 and v2):
            continue
        a, b = exact(v1), exact(v2)
        model = {"v1": share(a), "v2": share(b), "v2 - v1": change(a, b),
                 "v2 misses": misses(v2, stale), "v1 by kind": by_kind(v1),
                 "v2 by kind": by_kind(v2)}
        out["models"][name] = model
        c = model["v2 - v1"]
        print(f"{name:44s} v1 {100 * model['v1']['rate']:5.1f}  v2 {100 * model['v2']['rate']:5.1f}"
              f"  v2 - v1 {100 * c['diff']:+5.1f} ({100 * c['low']:+.1f}, {100 * c['high']:+.1f})"
              f" {c['gained']}/{c['lost']}  v2 misses {model['v2 misses']}")
    for label, (plain, anchored, step) in PAIRS.items():
        for week in ("v1", "v2"):
            p, q = rows.get(f"{tag(plain, step)}-{week}"), rows.get(f"{tag(anchored, step)}-{week}")
            if p and q:
                c = change(exact(p), exact(q))
                out["anchored - plain"][f"{label} on {week}"] = c
                print(f"anchored - plain, {label}, {week}: {100 * c['diff']:+5.1f} "
                      f"({100 * c['low']:+.1f}, {100 * c['high']:+.1f}) {c['gained']}/{c['lost']}")
    (Path(__file__).parent / "compare.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
