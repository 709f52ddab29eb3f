#!/usr/bin/env bash
# The shipped-base demo's paired claims, by case (the gates' view) and by kind (would the
# gain hold on other kinds?). Run after
#   HAT_HOME=H hat demo --no-ui --config examples/configs/retrain_demo_toylong.yaml --summary s.json
# from the repository folder (20-24 minutes of both cores), as `compare.sh H OUT`. This
# folder holds its output for the run of 2026-12-07 on an Intel Xeon, and that run's
# summary (summary-xeon.json).
set -euo pipefail
H=${1:?usage: compare.sh HAT_HOME OUT_DIR}
OUT=${2:?usage: compare.sh HAT_HOME OUT_DIR}
R=$H/runs
mkdir -p "$OUT"
pair() {  # name, a (reference), b, suites
  for by in case kind; do
    hat eval compare "$2" "$3" --suites "$4" --metrics first_call_exact,passed --by "$by" \
      --out "$OUT/$1.$by.json" > "$OUT/$1.$by.txt"
  done
}
pair v1-hat-vs-fixed "$R/demo-fixed-harness/eval/v1.cases.jsonl" \
  "$R/harness-live-stream-avatar-1/eval/candidate.cases.jsonl" t1,t2
pair v3-candidate-vs-champion "$R/harness-live-stream-avatar-3/eval/champion.cases.jsonl" \
  "$R/harness-live-stream-avatar-3/eval/candidate.cases.jsonl" t1,t2
