#!/usr/bin/env bash
# T2 as the table plays it: 30 scenarios x 4 held-out-pool variants of v1, compact, free.
set -uo pipefail
cd /work/main
W=runs/lead; HAT=.venv/bin/hat
i=0
for M in "$@"; do
  O=$W/eval/$M-t2-free.json
  [ -f ${O%.json}.cases.jsonl ] && continue
  OMP_NUM_THREADS=1 $HAT eval run $W/$M/checkpoints/checkpoint-600 --suites t2 --episodes 30 --variants 4 \
    --render-profile compact --max-tokens 160 --harness examples/harnesses/v1.yaml --out $O > $W/eval/t2-$M.log 2>&1 &
  i=$((i+1)); if (( i % 2 == 0 )); then wait; fi
done
wait; echo evaluated
