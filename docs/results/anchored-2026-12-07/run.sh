#!/bin/bash
# The anchored plan against the plain one (docs/results.md, "An anchored plan"): the demo's
# HAT-arm data (data_cpu.yaml, 3,000 scenarios, 500 surfaces, data seed 0, compact), built
# with teacher.plan plain and anchored, at the default opaque share 0.5 and at 1.0; 600 SFT
# steps from the shipped toy-long (lr 2e-3, batch 2 x 2,048, one thread each, two side by
# side, checkpoints at 300 and 600); T1 on v1 and v2, 90 scenarios. About 35 minutes of both
# cores. Note: the first anchored build quoted with 「」, which toy-long's tokenizer reads as
# <unk>; the code now quotes with 【】 (in the vocabulary), so a rerun of `data-anchored`
# differs from the measured one in those two characters.
set -e
cd "$(dirname "$0")/../../.."
W=${W:-runs/anc}; HAT=.venv/bin/hat; mkdir -p $W
build() {  # name plan opaque
  [ -f $W/data-$1/manifest.json ] || $HAT data build --harness examples/harnesses/v1.yaml \
    --config examples/configs/data_cpu.yaml --out $W/data-$1 --set scenarios=3000 \
    --set variants=500 --set render_profile=compact --set hsa.probabilities.opaque=$3 \
    --set teacher.plan=$2 > $W/data-$1.log 2>&1
}
train() {  # name
  [ -d $W/sft-$1/checkpoints/checkpoint-600 ] || OMP_NUM_THREADS=1 $HAT train sft \
    --config examples/configs/sft_cpu.yaml --set base=examples/models/toy-long \
    --set dataset=$W/data-$1 --set output_dir=$W/sft-$1 --set learning_rate=2e-3 \
    --set warmup_steps=10 --set per_device_train_batch_size=2 --set num_threads=1 \
    --set save_steps=300 --set save_total_limit=20 --set render_profile=compact \
    --max-steps 600 > $W/sft-$1.log 2>&1
}
evaluate() {  # model dirs under $W; T1 on v1 and v2, two at a time
  mkdir -p $W/eval; local i=0
  for m in "$@"; do for wk in v1 v2; do
    out=$W/eval/$(echo $m | tr '/' '-')-$wk.json
    [ -f ${out%.json}.cases.jsonl ] && continue
    OMP_NUM_THREADS=1 $HAT eval run $W/$m --suites t1 --episodes 90 --render-profile compact \
      --max-tokens 160 --harness examples/harnesses/$wk.yaml --out $out > ${out%.json}.log 2>&1 &
    i=$((i + 1)); [ $((i % 2)) -eq 0 ] && wait
  done; done; wait
}
build plain plain 0.5 & build anchored anchored 0.5 & wait
train plain & train anchored & wait
build op-plain plain 1.0 & build op-anchored anchored 1.0 & wait
train op-plain & train op-anchored & wait
ck=checkpoints/checkpoint
evaluate sft-plain/$ck-300 sft-anchored/$ck-300 sft-plain/$ck-600 sft-anchored/$ck-600 \
  sft-op-plain/$ck-600 sft-op-anchored/$ck-600
.venv/bin/python docs/results/anchored-2026-12-07/compare.py
