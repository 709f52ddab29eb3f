#!/usr/bin/env bash
# Block expansion (hat_core/basemodel/grow.py): toy-long grown from 4 to 8 layers, the same
# function, against toy-long itself, through the demo's `multi` base and HSA arm (600 + 600
# steps, compact-args), each played on v1 and v2 freely and with calls held to the offered
# tools. About 70 minutes of both cores on a quiet 2-core machine. Reads and writes runs/grow.
set -euo pipefail
cd "$(dirname "$0")/../../.."
PY=.venv/bin/python
[ -d runs/toy-long-8 ] || $PY -c "from pathlib import Path; from hat_core.basemodel.grow import grow_depth; print(grow_depth(Path('examples/models/toy-long'), Path('runs/toy-long-8'), layers=8))"
for arm in grown:runs/toy-long-8 plain:examples/models/toy-long; do
  name=${arm%%:*}; start=${arm#*:}
  for flag in "" --constrain-tools; do
    $PY benchmarks/demo_base.py --work runs/grow/$name --start $start --bases multi --arms hsa \
      --steps 300,600 --render-profile compact-args $flag
  done
done
