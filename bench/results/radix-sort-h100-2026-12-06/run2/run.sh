#!/usr/bin/env bash
# The lead's one closing device call (2026-12-06): radix sort (branch radix at 164ea2f+: the reworked histogram,
# never run on a GPU before) and segmented_reduce (never run on a GPU before): GPU tests + benchmarks.
# run(command="bash .dev/families/final_device.sh", carry=[".dev/families", ".dev/radix"])
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
top=$PWD/.dev
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$top"/families/.whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt"; cat "$OUT/env.txt"
t0=$SECONDS
cd "$top/radix" || exit 4
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
timeout -s KILL 60 python3 -m pytest tests/gpu/test_radix_sort_gpu.py -m gpu -rfE -n 4 -q -p no:cacheprovider > "$OUT/radix-pytest.log" 2>&1
echo "radix tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -3 "$OUT/radix-pytest.log"
timeout -s KILL 45 python3 bench/radix_sort.py --gen .gen/h200 --out-md "$OUT/radix.md" --cache "$PWD/.muh-cache/bench" > "$OUT/radix-bench.log" 2>&1
echo "radix bench rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -25 "$OUT/radix-bench.log"
cd "$top/families" || exit 5
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
timeout -s KILL 80 python3 -m pytest tests/gpu/test_segmented_reduce_gpu.py -x -q -rfE -p no:cacheprovider > "$OUT/seg-pytest.log" 2>&1
echo "seg tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -3 "$OUT/seg-pytest.log"; grep -E "^E  " "$OUT/seg-pytest.log" | head -10
timeout -s KILL 60 python3 bench/segmented_reduce.py --cache .muh-cache/bench --out-md "$OUT/seg.md" > "$OUT/seg-bench.log" 2>&1
echo "seg bench rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -20 "$OUT/seg-bench.log"
