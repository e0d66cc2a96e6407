#!/usr/bin/env bash
# One device call for segmented_reduce (issue 40): its GPU tests (H200 kernels natively, the BI-V100's at
# warp 64 emulated, a tiny policy through every class) and bench/segmented_reduce.py, logs under $OUT.
#   run(command="cd .dev/families && bash bench/segmented_reduce_device.sh", carry=[".dev/families"])
# Libraries prebuilt elsewhere travel in .muh-cache/ (MUH_CACHE_DIR): the same sources hash alike.
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests || exit 3
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt"; cat "$OUT/env.txt"
t0=$SECONDS
timeout -s KILL ${TESTS_S:-200} python3 -m pytest tests/gpu/test_segmented_reduce_gpu.py -x -q -rfE -p no:cacheprovider \
  -o console_output_style=classic --durations=5 > "$OUT/pytest.log" 2>&1
echo "tests rc=$? $((SECONDS - t0)) s"; grep -E "passed|failed|error" "$OUT/pytest.log" | tail -3
grep -E "FAILED|Error|assert" "$OUT/pytest.log" | head -8
timeout -s KILL ${BENCH_S:-150} python3 bench/segmented_reduce.py --cache .muh-cache/bench \
  --out-md "$OUT/segmented_reduce.md" --out-json "$OUT/segmented_reduce.json" > "$OUT/bench.log" 2>&1
echo "bench rc=$? $((SECONDS - t0)) s"; tail -14 "$OUT/bench.log"
