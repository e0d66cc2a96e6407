#!/usr/bin/env bash
# 2026-12-02, fourth device call: the rms_norm row experiment (bench/results/wave4-2026-12-02/experiments/rms_rows.cu) timed both
# ways (one cold launch; a graph of 40 calls over rotating inputs, bench/ops_grid.py's method), then the
# histogram rows of the kernel bench with the tuned spec (muh vs CUB, same process; the third call's
# attempt passed --gen without generating first).
#   run(command="bash bench/results/wave4-2026-12-02/wave4_call4.sh", carry=[".whl"], timeout_s=500)
set -u
SECONDS=0
END=${DEADLINE_S:-440}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/device_env.sh
nvcc -std=c++17 -O3 -arch=sm_90 -I generated/h200/include bench/results/wave4-2026-12-02/experiments/rms_rows.cu generated/h200/kernels/ops.cu \
  generated/h200/kernels/common.cu -o /tmp/rms_rows > $OUT/rms_rows.log 2>&1
timeout -s KILL $(cap 90) /tmp/rms_rows >> $OUT/rms_rows.log 2>&1; echo "rms_rows rc=$? at $SECONDS s" >> $OUT/times.txt
timeout -s KILL $(cap 330) python3 bench/kernels.py --only histogram --quick \
  --out-json "$OUT/histogram.json" --out-md "$OUT/histogram.md" > "$OUT/bench.log" 2>&1
echo "bench rc=$? at $SECONDS s" >> $OUT/times.txt
