#!/bin/bash
# T1 on v1 and on v2 (the table's "T2 (v2 edit)": T1's scenarios under v2), free and held
cd "$(git rev-parse --show-toplevel)"
job() { # seed arm flag week
  local out=runs/held/s$1-$2-$3-t1-$4.json
  [ -f ${out%.json}.cases.jsonl ] && return
  OMP_NUM_THREADS=1 HAT_HOME=runs/home-held .venv/bin/hat eval run runs/repro1200-s$1/seed$1/$2 \
    --suites t1 --episodes 30 --seed $1 --render-profile compact --max-tokens 160 \
    --harness examples/harnesses/$4.yaml --out $out $([ $3 = held ] && echo --constrain-tools) > ${out%.json}.log 2>&1
}
while pgrep -f runs/held/run.sh > /dev/null; do sleep 5; done
for s in 1 2; do for arm in hsa_sft fixed_sft; do
  job $s $arm free v2 & job $s $arm held v2 & wait
  job $s $arm free v1 & job $s $arm held v1 & wait
done; done
echo done
