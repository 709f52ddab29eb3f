#!/bin/bash
# The CoT leg of the table: HSA-SFT + OPD, then HSA-RL, with the long-reasoning oracle (60 tokens)
set -euo pipefail
W=${W:-runs/cot-s0}; H=.venv/bin/hat; N=60
t0=$(date +%s); stamp() { echo "[$(date +%T)] $1 at $(( $(date +%s) - t0 )) s"; }
$H data build --harness examples/harnesses/v1.yaml --config examples/configs/data_cpu.yaml \
   --out $W/data --set seed=0 --set teacher.reasoning_tokens=$N; stamp data
$H train sft --config examples/configs/sft_cpu.yaml --base examples/models/toy-long -o $W/sft \
   --max-steps 400 --set dataset=$W/data --set seed=0 --set num_threads=1 --set save_steps=100000 \
   --set logging_steps=20; stamp sft
$H train opd --config examples/configs/opd_cpu.yaml --base $W/sft -o $W/opd --max-steps 50 \
   --set prompts=$W/data --set seed=0 --set num_threads=1 --set save_steps=100000; stamp opd
$H train rl --config examples/configs/rl_cpu.yaml --base $W/opd -o $W/rl --max-steps 40 \
   --set cot.teacher_tokens=$N --set seed=0 --set num_threads=1 --set save_steps=100000; stamp rl
for m in opd rl; do
  OMP_NUM_THREADS=1 $H eval run $W/$m --suites t1,t2,cot_length --episodes 30 --variants 4 --seed 0 \
     --max-tokens 256 --render-profile compact --harness examples/harnesses/v1.yaml \
     --out $W/eval/$m.json; stamp "eval $m"
done
