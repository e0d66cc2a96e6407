#!/usr/bin/env bash
# 2026-12-02, sixth device call: the issue-16 grid again, now that bench/presets.py builds the ops the
# spec's build emits (its tuned rms_norm / silu_and_mul policies and size buckets; before, the presets
# derived the ops from reduce and transform alone and the grid timed an untuned 256 x 1 row shape).
#   run(command="bash bench/results/wave4-2026-12-02/wave4_call6.sh", carry=[".whl"], timeout_s=340)
set -u
SECONDS=0
END=${DEADLINE_S:-320}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/device_env.sh
timeout -s INT $(cap 305) python3 bench/ops_grid.py --out-md $OUT/grid.md --out-json $OUT/grid.json > $OUT/grid.log 2>&1
echo "grid rc=$? at $SECONDS s" >> $OUT/times.txt
