#!/bin/bash
# HSA-SFT of seeds 1, 2 (1,200 steps), held calls, on each single change of v2 (benchmarks/demo_base.py week_parts)
# the parts first: .venv/bin/python -c "import sys; sys.path.insert(0, 'benchmarks'); from pathlib import Path; from demo_base import week_parts, HARNESSES; week_parts(HARNESSES / 'v1.yaml', HARNESSES / 'v2.yaml', Path('runs/held/v2-parts'))"
cd "$(git rev-parse --show-toplevel)"
job() { local out=runs/held/s$1-hsa_sft-held-part-$2.json; [ -f ${out%.json}.cases.jsonl ] && return
  OMP_NUM_THREADS=1 HAT_HOME=runs/home-held .venv/bin/hat eval run runs/repro1200-s$1/seed$1/hsa_sft --suites t1 --episodes 30 --seed $1 --render-profile compact --max-tokens 160 --harness runs/held/v2-parts/$2.yaml --out $out --constrain-tools > ${out%.json}.log 2>&1; }
for part in tool-names parameter-names skill-names descriptions tool-order all-but-the-renames; do
  job 1 $part & job 2 $part & wait
done
echo done
