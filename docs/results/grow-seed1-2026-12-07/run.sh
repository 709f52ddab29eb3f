#!/usr/bin/env bash
# A second replicate of docs/results/grow-2026-12-06: toy-long grown to 8 layers against
# toy-long, through the demo's `multi` base and HSA arm (600 + 600 steps, compact-args), with
# `--seed 1` (data seeds 8 and 1, training seed 1; the same 45 scenarios), each played on v1
# and v2 freely and with calls held. The two chains run side by side (84 minutes of 2 cores on
# 2026-12-07, 64 of them beside a test run). Reads and writes runs/grow-s1; compare.py pools it with
# the first replicate.
set -euo pipefail
cd "$(dirname "$0")/../../.."
PY=.venv/bin/python
[ -d runs/toy-long-8 ] || $PY -c "from pathlib import Path; from hat_core.basemodel.grow import grow_depth; print(grow_depth(Path('examples/models/toy-long'), Path('runs/toy-long-8'), layers=8))"
chain() {
  local name=$1 start=$2
  for flag in "" --constrain-tools; do
    $PY benchmarks/demo_base.py --work runs/grow-s1/$name --start $start --bases multi \
      --arms hsa --steps 300,600 --render-profile compact-args --seed 1 $flag
  done
}
mkdir -p runs/grow-s1
chain grown runs/toy-long-8 > runs/grow-s1/grown.out 2>&1 &
chain plain examples/models/toy-long > runs/grow-s1/plain.out 2>&1 &
wait
