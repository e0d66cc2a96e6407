#!/usr/bin/env bash
# Follow-up to the lab run of 2026-11-30 (bench/results/lab-2026-11-30/followup.md), one device call:
#   run(command="bash bench/results/lab-2026-11-30/followup_run.sh", carry=[".whl"], timeout_s=330)
# 1. the warp-size check (test_kernels_gpu.py whole, negative control), 2. sanitizer incl. the
# racecheck probe, 3. the ops GPU tests, 4. rms_norm A/B (old vs new ops.cu, same run). Logs under $OUT.
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/san"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1 MAX_JOBS=16 MUH_SANITIZER_LOG_DIR=$OUT/san
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/env.txt"
compute-sanitizer --version 2>/dev/null | tail -1 >> "$OUT/env.txt" || /usr/local/cuda/bin/compute-sanitizer --version | tail -1 >> "$OUT/env.txt"
t0=$SECONDS
timeout -s KILL 120 python3 -c "from gpu_helpers import prebuild; prebuild('/tmp/gen')" > "$OUT/build.log" 2>&1 &
timeout -s KILL 120 python3 bench/ops.py --build-only >> "$OUT/build.log" 2>&1 &
timeout -s KILL 120 python3 bench/results/lab-2026-11-30/rms_ab.py generated/h200 bench/results/lab-2026-11-30/rms_ab_old_ops.cu --build-only >> "$OUT/build.log" 2>&1 &
wait; echo "build $((SECONDS-t0)) s"
P="-p no:cacheprovider -rfEx -o console_output_style=classic"
timeout -s KILL 100 python3 -m pytest tests/gpu/test_kernels_gpu.py tests/gpu/test_negative_control.py -m gpu -n 6 $P \
  > "$OUT/kernels.log" 2>&1 &
k=$!
timeout -s KILL 170 python3 -m pytest tests/gpu/test_sanitizer.py -n 6 -v -s $P > "$OUT/sanitizer.log" 2>&1 &
s=$!
wait $k; echo "kernels $((SECONDS-t0)) s"; grep -E "FAILED|ERROR|passed|failed" "$OUT/kernels.log" | tail -6
timeout -s KILL 80 python3 -m pytest --noconftest tests/gpu/test_ops_gpu.py -q -n 4 $P > "$OUT/ops.log" 2>&1
echo "ops $((SECONDS-t0)) s"; tail -3 "$OUT/ops.log"
wait $s; echo "sanitizer $((SECONDS-t0)) s"; grep -E "PASSED|FAILED|XFAIL|ERROR|racecheck on race-free|passed|failed" "$OUT/sanitizer.log" | tail -14
grep -h "SUMMARY" "$OUT"/san/*.log | sort | uniq -c | head -20
for f in "$OUT"/san/*.log; do echo "$(basename $f): $(grep -h 'SUMMARY' $f)"; done
timeout -s KILL 60 python3 bench/results/lab-2026-11-30/rms_ab.py generated/h200 bench/results/lab-2026-11-30/rms_ab_old_ops.cu --out-md "$OUT/rms_ab.md" > "$OUT/rms_ab.log" 2>&1
echo "ab $((SECONDS-t0)) s (rc $?)"; tail -12 "$OUT/rms_ab.log"
cd "$OUT/san" && tar czf ../san.tgz . && cd - > /dev/null && rm -rf "$OUT/san"
