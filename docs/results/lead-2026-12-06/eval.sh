#!/usr/bin/env bash
# every model M given: T1 (45 scenarios, compact, greedy, 160 tokens) on v1, v2 and v2's tool
# renames alone, free and held (--constrain-tools); two at a time, one thread each.
set -uo pipefail
cd /work/main
W=runs/lead; HAT=.venv/bin/hat
jobs=()
for M in "$@"; do
  for H in v1 v2 tool-names; do
    HF=examples/harnesses/$H.yaml; [ $H = tool-names ] && HF=$W/v2-parts/tool-names.yaml
    for D in free held; do
      F=""; [ $D = held ] && F=--constrain-tools
      O=$W/eval/$(basename $M)-$H-$D.json
      [ -f ${O%.json}.cases.jsonl ] || jobs+=("$HAT eval run $W/$M/checkpoints/checkpoint-600 --suites t1 --episodes 45 --render-profile compact --max-tokens 160 --harness $HF --out $O $F")
    done
  done
done
mkdir -p $W/eval
i=0
for j in "${jobs[@]}"; do
  OMP_NUM_THREADS=1 bash -c "$j" > $W/eval/job$i.log 2>&1 &
  i=$((i+1))
  if (( i % 2 == 0 )); then wait; fi
done
wait
echo evaluated
