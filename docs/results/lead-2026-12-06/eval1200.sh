#!/usr/bin/env bash
# The 1,200-step models as the table plays them (eval world 1): T1 30 scenarios on v1, v2 and
# v2's tool renames alone, T2 30 x 4 held-out-pool variants; free and held; two at a time.
set -uo pipefail
cd /work/main
W=runs/lead; HAT=.venv/bin/hat
jobs=()
for M in h1200-s1-p0.0 h1200-s1-p0.5; do
  for H in v1 v2 tool-names t2; do
    HF=examples/harnesses/$H.yaml; S="--suites t1 --episodes 30"
    [ $H = tool-names ] && HF=$W/v2-parts/tool-names.yaml
    [ $H = t2 ] && HF=examples/harnesses/v1.yaml && S="--suites t2 --episodes 30 --variants 4"
    for D in free held; do
      F=""; [ $D = held ] && F=--constrain-tools
      O=$W/eval/$M-$H-$D.json
      [ -f ${O%.json}.cases.jsonl ] || jobs+=("$HAT eval run $W/$M $S --seed 1 --render-profile compact --max-tokens 160 --harness $HF --out $O $F")
    done
  done
done
i=0
for j in "${jobs[@]}"; do
  OMP_NUM_THREADS=1 bash -c "$j" > $W/eval/j1200-$i.log 2>&1 &
  i=$((i+1)); if (( i % 2 == 0 )); then wait; fi
done
wait; echo evaluated
