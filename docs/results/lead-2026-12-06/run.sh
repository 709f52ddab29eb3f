#!/usr/bin/env bash
# shared_lead A/B: HSA-SFT from toy-long on data_cpu (seed S, 6000 scenarios, 1000 surfaces),
# without (p=0) and with (p=0.5) the shared lead; 600 steps, lr 2e-3, batch 2x2048, 1 thread each.
set -euo pipefail
cd /work/main
W=runs/lead
HAT=.venv/bin/hat
for S in $SEEDS; do
  for P in 0.0 0.5; do
    D=$W/data-s$S-p$P
    [ -f $D/manifest.json ] || $HAT data build --harness examples/harnesses/v1.yaml --config examples/configs/data_cpu.yaml \
      --out $D --set seed=$S --set scenarios=6000 --set variants=1000 --set catalog_size=600 \
      --set render_profile=compact --set hsa.probabilities.shared_lead=$P > $D.log 2>&1
  done
done
pids=()
for S in $SEEDS; do
  for P in 0.0 0.5; do
    O=$W/m-s$S-p$P
    [ -d $O/checkpoints/checkpoint-600 ] && continue
    OMP_NUM_THREADS=1 $HAT train sft --config examples/configs/sft_cpu.yaml --set base=examples/models/toy-long \
      --set dataset=$W/data-s$S-p$P --set output_dir=$O --set learning_rate=2e-3 --set warmup_steps=10 \
      --set per_device_train_batch_size=2 --set num_threads=1 --set save_steps=600 --set save_total_limit=2 \
      --set render_profile=compact --max-steps 600 > $O.log 2>&1 &
    pids+=($!)
  done
done
for p in "${pids[@]}"; do wait $p; done
echo trained
