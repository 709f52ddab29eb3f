#!/bin/bash
# T2 of the 1,200-step table's SFT arms (seeds 1, 2), free and with calls held to the offered tools
cd "$(git rev-parse --show-toplevel)"
job() { # seed arm flag
  local out=runs/held/s$1-$2-$3.json
  [ -f ${out%.json}.cases.jsonl ] && return
  OMP_NUM_THREADS=1 HAT_HOME=runs/home-held .venv/bin/hat eval run runs/repro1200-s$1/seed$1/$2 \
    --suites t2 --episodes 30 --variants 4 --seed $1 --render-profile compact --max-tokens 160 \
    --harness examples/harnesses/v1.yaml --out $out $([ $3 = held ] && echo --constrain-tools) > ${out%.json}.log 2>&1
}
for s in 1 2; do
  job $s hsa_sft free & job $s hsa_sft held & wait
  job $s fixed_sft free & job $s fixed_sft held & wait
done
echo done
