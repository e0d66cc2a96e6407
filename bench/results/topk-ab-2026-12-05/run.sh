#!/usr/bin/env bash
# topk before/after the shared radix-select pass (RowGather), timed in one device call, alternating.
# Before: generated/h200 at 8d9a1c8, extracted into .muh-cache/old (carried); after: generated/h200 at HEAD.
#   git archive 8d9a1c8 generated/h200 | tar -x -C .muh-cache/old
#   bash bench/results/topk-ab-2026-12-05/run.sh   (device tool, carry .whl and .muh-cache/old)
set -uo pipefail
source bench/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
for round in 1 2; do
  for side in before after; do
    gen=generated/h200; [ "$side" = before ] && gen=.muh-cache/old/generated/h200
    python3 bench/kernels.py --gen "$gen" --only topk --out-json "$OUT/$side-$round.json" \
      > "$OUT/$side-$round.log" 2>&1 || echo "$side-$round failed rc=$?"
    tail -6 "$OUT/$side-$round.log"
  done
done
