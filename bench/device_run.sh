#!/usr/bin/env bash
# One call on the lab GPU: build everything, GPU tests, sanitizer, torch extension, benchmark.
#   run(command="bash bench/device_run.sh [all|tests|bench]", carry=[".whl"])   (logs, results under $OUT)
# Limits (seconds) via TESTS_S, SAN_S, BENCH_S. The whole GPU suite needs ~3-4 min serial.
set -o pipefail
mode=${1:-all}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1 MAX_JOBS=16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/env.txt"
python3 -c "import torch; print('torch', torch.__version__)" >> "$OUT/env.txt"
t0=$SECONDS
# 1. every library the tests and the bench use, in parallel (CPU only)
python3 -c "from gpu_helpers import prebuild; prebuild('/tmp/gen')" > "$OUT/build.log" 2>&1 &
[[ $mode != tests ]] && python3 -c "
import sys; sys.path.insert(0, 'bench'); from pathlib import Path; import kernels as kb
kb.build_cub(Path('.muh-cache/bench')); kb.build_variants(Path('.muh-cache/bench'))" >> "$OUT/build.log" 2>&1 &
wait; echo "build $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"
if [[ $mode != bench ]]; then
# 2. torch extension (compiles with torch headers) in the background while the GPU tests run
timeout -s KILL 170 python3 -m pytest tests/gpu/test_torch_extension.py -q -rfE -p no:cacheprovider > "$OUT/torch_ext.log" 2>&1 &
ext=$!
timeout -s KILL ${TESTS_S:-150} python3 -m pytest tests/gpu/test_kernels_gpu.py tests/gpu/test_negative_control.py \
  -m gpu -rfE -n 4 -p no:cacheprovider --durations=10 -o console_output_style=classic -v > "$OUT/pytest.log" 2>&1
echo "tests $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; grep -cE " PASSED" "$OUT/pytest.log"; grep -E "FAILED|ERROR" "$OUT/pytest.log" | head -20; tail -14 "$OUT/pytest.log"
timeout -s KILL ${SAN_S:-120} python3 -m pytest tests/gpu/test_sanitizer.py -q -rfE -n 4 -p no:cacheprovider \
  > "$OUT/sanitizer.log" 2>&1
echo "sanitizer $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -8 "$OUT/sanitizer.log"
wait $ext; tail -5 "$OUT/torch_ext.log"; echo "torch-ext $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"
fi
[[ $mode == tests ]] && exit 0
# 3. the benchmark last, on an otherwise idle machine
timeout -s KILL ${BENCH_S:-150} python3 bench/kernels.py --variants --out-json "$OUT/h200.json" --out-md "$OUT/h200.md" \
  > "$OUT/bench.log" 2>&1
echo "bench $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; cat "$OUT/h200.md"
