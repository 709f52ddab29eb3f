#!/usr/bin/env bash
# The table's HSA-SFT arm of seed 1 (repro_full.yaml: data_cpu.yaml seed 1, sft_cpu.yaml 1,200
# steps, one thread), without (p0.0: the table's own model, which it must reproduce) and with
# shared_lead 0.5, side by side.
set -euo pipefail
cd /work/main
W=runs/lead; HAT=.venv/bin/hat
for P in 0.0 0.5; do
  D=$W/d1200-s1-p$P
  [ -f $D/manifest.json ] || $HAT data build --harness examples/harnesses/v1.yaml --config examples/configs/data_cpu.yaml \
    --out $D --set seed=1 --set render_profile=compact --set hsa.probabilities.shared_lead=$P > $D.log 2>&1
done
while pgrep -f eval-t2.sh > /dev/null; do sleep 5; done
pids=()
for P in 0.0 0.5; do
  O=$W/h1200-s1-p$P
  [ -d $O/checkpoints/checkpoint-1200 ] && continue
  OMP_NUM_THREADS=1 $HAT train sft --config examples/configs/sft_cpu.yaml --set base=examples/models/toy-long \
    --set dataset=$W/d1200-s1-p$P --set output_dir=$O --set seed=1 --set num_threads=1 --set render_profile=compact \
    --set max_steps=1200 --set logging_steps=20 --set save_steps=1200 --set probe.enabled=false > $O.log 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
echo trained
