#!/usr/bin/env bash
# Session 3 of 2026-12-06, device call 2: radix sort after 1bb7460 (pairs at two onesweep blocks per SM, the
# histogram bounded): GPU tests, benchmark, ncu kernel split; ncu detail (stall reasons) of one onesweep pass, muh vs
# CUB, and of the segmented reduce's logits row (muh's few_kernel vs CUB's kernel).
# run(command="bash .dev/call2.sh", carry=[".dev/radix2", ".dev/segred", ".dev/call2.sh"])
set -o pipefail
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p "$R/radix" "$R/segred"
top=$PWD/.dev
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$top"/radix2/.whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"; cat "$R/env.txt"
t0=$SECONDS
cd "$top/radix2" || exit 4
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
timeout -s KILL 90 python3 -m pytest tests/gpu/test_radix_sort_gpu.py -m gpu -rfE -n 4 -q -p no:cacheprovider > "$R/radix/pytest.log" 2>&1
echo "radix tests rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; tail -2 "$R/radix/pytest.log"; grep -E "^(FAILED|ERROR)" "$R/radix/pytest.log" | head
timeout -s KILL 75 python3 bench/radix_sort.py --gen .gen/h200 --out-md "$R/radix/radix.md" --out-json "$R/radix/radix.json" --cache "$PWD/.muh-cache/bench" > "$R/radix/bench.log" 2>&1
echo "radix bench rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; grep -E "2\^28|rows" "$R/radix/bench.log"
M=gpu__time_duration.sum,dram__bytes.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
for v in keys pairs; do
  fl=(); [ $v = pairs ] && fl=(--pairs)
  timeout -s KILL 60 ncu --clock-control none --metrics $M --csv python3 bench/radix_profile.py --gen .gen/h200 "${fl[@]}" --cache "$PWD/.muh-cache/bench" > "$R/radix/ncu-$v.csv" 2> "$R/radix/ncu-$v.err"
  echo "ncu $v rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"
  python3 bench/radix_profile.py --summary "$R/radix/ncu-$v.csv" | tee "$R/radix/ncu-$v.md"
done
S=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats)
for who in "muh:regex:onesweep_kernel" "cub:regex:DeviceRadixSortOnesweepKernel"; do
  name=${who%%:*}; k=${who#*:}
  timeout -s KILL 60 ncu --clock-control none "${S[@]}" --kernel-name "$k" --launch-skip 5 --launch-count 1 python3 bench/radix_profile.py --gen .gen/h200 --log2 26 --cache "$PWD/.muh-cache/bench" > "$R/radix/detail-$name.txt" 2>&1
  echo "ncu detail $name rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"
done
cd "$top/segred" || exit 5
[ -d .muh-cache ] || tar -xJf muh-cache.tar.xz || exit 6
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
for who in "muh:regex:few_kernel" "cub:regex:DeviceSegmentedReduceKernel"; do
  name=${who%%:*}; k=${who#*:}
  timeout -s KILL 60 ncu --clock-control none "${S[@]}" --kernel-name "$k" --launch-skip 20 --launch-count 1 python3 bench/segmented_reduce.py --cache .muh-cache/bench --cases logits > "$R/segred/detail-$name.txt" 2>&1
  echo "ncu segred $name rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"
done
grep -E "Duration|DRAM Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|No Eligible|Issued Warp" "$R"/segred/detail-*.txt | head -40
grep -E "Duration|DRAM Throughput|Achieved Occupancy|No Eligible|Issued Warp|Stall" "$R"/radix/detail-*.txt | head -40
tar -cJf "$OUT/r.tar.xz" -C "$OUT" r && rm -rf "$R"
