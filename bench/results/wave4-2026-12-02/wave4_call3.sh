#!/usr/bin/env bash
# 2026-12-02, third device call: the histogram types whose winners sat on an edge of the first space
# (uint8, int8: 960 threads x 16 pixels; float64: 960 x 4) searched again over the widened space
# (threads to 1024, pixels 2..24), --against the spec before the histogram campaign; then the rms_norm
# row-pipelining experiment (bench/results/wave4-2026-12-02/experiments/rms_rows.cu) and the histogram rows of the kernel bench
# with the tuned spec (muh vs CUB, same process).
#   run(command="bash bench/results/wave4-2026-12-02/wave4_call3.sh", carry=[".whl", ".dev/tunedb", ".dev/against"], timeout_s=590)
set -u
SECONDS=0
END=${DEADLINE_S:-560}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/device_env.sh
( nvcc -std=c++17 -O3 -arch=sm_90 -I generated/h200/include bench/results/wave4-2026-12-02/experiments/rms_rows.cu generated/h200/kernels/ops.cu \
    generated/h200/kernels/common.cu -o /tmp/rms_rows > /tmp/rms_build.log 2>&1 ) &
NV=$!
DEADLINE_S=320 TYPE_S=80 AGAINST_S=25 TYPES="uint8 int8 float64" bash bench/results/wave4-2026-12-02/tune_histogram.sh > /dev/null 2>&1
echo "histogram campaign done at $SECONDS s" > $OUT/times.txt
wait $NV; cat /tmp/rms_build.log > $OUT/rms_rows.log
timeout -s KILL $(cap 60) /tmp/rms_rows >> $OUT/rms_rows.log 2>&1; echo "rms_rows rc=$? at $SECONDS s" >> $OUT/times.txt
timeout -s KILL $(cap 200) python3 bench/kernels.py --only histogram --gen /tmp/genh \
  --out-json "$OUT/histogram.json" --out-md "$OUT/histogram.md" > "$OUT/bench.log" 2>&1
echo "bench rc=$? at $SECONDS s" >> $OUT/times.txt
