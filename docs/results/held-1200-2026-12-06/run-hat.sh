#!/bin/bash
# the HAT arm (hat_rl) of seeds 1, 2: T2 and T1 on v1, free and held
cd "$(git rev-parse --show-toplevel)"
t2() { local out=runs/held/s$1-hat_rl-$2.json; OMP_NUM_THREADS=1 HAT_HOME=runs/home-held .venv/bin/hat eval run runs/repro1200-s$1/seed$1/hat_rl --suites t2 --episodes 30 --variants 4 --seed $1 --render-profile compact --max-tokens 160 --harness examples/harnesses/v1.yaml --out $out $([ $2 = held ] && echo --constrain-tools) > ${out%.json}.log 2>&1; }
t1() { local out=runs/held/s$1-hat_rl-$2-t1-v1.json; OMP_NUM_THREADS=1 HAT_HOME=runs/home-held .venv/bin/hat eval run runs/repro1200-s$1/seed$1/hat_rl --suites t1 --episodes 30 --seed $1 --render-profile compact --max-tokens 160 --harness examples/harnesses/v1.yaml --out $out $([ $2 = held ] && echo --constrain-tools) > ${out%.json}.log 2>&1; }
for s in 1 2; do t2 $s free & t2 $s held & wait; t1 $s free & t1 $s held & wait; done
echo done
