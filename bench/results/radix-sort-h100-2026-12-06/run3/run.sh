#!/usr/bin/env bash
# Session 3 of 2026-12-06, device call 1: radix sort (tests, benchmark, ncu kernel split at 2^28 u32) and
# segmented reduce (every GPU test, the full benchmark), both prebuilt for sm_90 on the CPU machine.
# run(command="bash .dev/call1.sh", carry=[".dev/radix2", ".dev/segred"])
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/radix" "$OUT/segred"
top=$PWD/.dev
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$top"/radix2/.whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt"; cat "$OUT/env.txt"
t0=$SECONDS
cd "$top/radix2" || exit 4
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
timeout -s KILL 90 python3 -m pytest tests/gpu/test_radix_sort_gpu.py -m gpu -rfE -n 4 -q -p no:cacheprovider > "$OUT/radix/pytest.log" 2>&1
echo "radix tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -3 "$OUT/radix/pytest.log"; grep -E "^(FAILED|ERROR)" "$OUT/radix/pytest.log" | head
timeout -s KILL 75 python3 bench/radix_sort.py --gen .gen/h200 --out-md "$OUT/radix/radix.md" --out-json "$OUT/radix/radix.json" --cache "$PWD/.muh-cache/bench" > "$OUT/radix/bench.log" 2>&1
echo "radix bench rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; grep -E "2\^28|rows" "$OUT/radix/bench.log"
M=gpu__time_duration.sum,dram__bytes.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
for v in keys pairs; do
  fl=(); [ $v = pairs ] && fl=(--pairs)
  timeout -s KILL 60 ncu --clock-control none --metrics $M --csv python3 bench/radix_profile.py --gen .gen/h200 "${fl[@]}" --cache "$PWD/.muh-cache/bench" > "$OUT/radix/ncu-$v.csv" 2> "$OUT/radix/ncu-$v.err"
  echo "ncu $v rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"
  python3 bench/radix_profile.py --summary "$OUT/radix/ncu-$v.csv" | tee "$OUT/radix/ncu-$v.md"
done
cd "$top/segred" || exit 5
[ -d .muh-cache ] || tar -xJf muh-cache.tar.xz || exit 6
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
timeout -s KILL 120 python3 -m pytest tests/gpu/test_segmented_reduce_gpu.py -q -rfE -p no:cacheprovider --durations=5 > "$OUT/segred/pytest.log" 2>&1
echo "seg tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -3 "$OUT/segred/pytest.log"; grep -E "^(FAILED|ERROR)|^E  " "$OUT/segred/pytest.log" | head -12
timeout -s KILL 90 python3 bench/segmented_reduce.py --cache .muh-cache/bench --split --out-md "$OUT/segred/seg.md" --out-json "$OUT/segred/seg.json" > "$OUT/segred/bench.log" 2>&1
echo "seg bench rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -14 "$OUT/segred/bench.log"
