#!/usr/bin/env bash
# Session 3 of 2026-12-06, device call 6: radix sort with whole tiles unchecked (GPU tests, benchmark, ncu kernel split,
# the onesweep pass's executed instructions vs CUB's).
# run(command="bash .dev/call6.sh", carry=[".dev/radix2", ".dev/call6.sh"])
set -o pipefail
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p "$R"
cd .dev/radix2 || exit 4
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"; cat "$R/env.txt"
t0=$SECONDS
timeout -s KILL 90 python3 -m pytest tests/gpu/test_radix_sort_gpu.py -m gpu -rfE -n 4 -q -p no:cacheprovider > "$R/pytest.log" 2>&1
echo "radix tests rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; tail -2 "$R/pytest.log"; grep -E "^(FAILED|ERROR)" "$R/pytest.log" | head
timeout -s KILL 80 python3 bench/radix_sort.py --gen .gen/h200 --out-md "$R/radix.md" --out-json "$R/radix.json" --cache "$PWD/.muh-cache/bench" > "$R/bench.log" 2>&1
echo "radix bench rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; grep -E "2\^28|rows|MISMATCH" "$R/bench.log"
M=gpu__time_duration.sum,dram__bytes.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
timeout -s KILL 60 ncu --clock-control none --metrics $M --csv python3 bench/radix_profile.py --gen .gen/h200 --cache "$PWD/.muh-cache/bench" > "$R/ncu-keys.csv" 2> "$R/ncu-keys.err"
echo "ncu keys rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"
python3 bench/radix_profile.py --summary "$R/ncu-keys.csv" | tee "$R/ncu-keys.md"
grep -E "onesweep|Onesweep" "$R/ncu-keys.csv" | grep inst_executed | head -12 | awk -F'","' '{print $5" "$NF}' | cut -c1-40,200-
tar -cJf "$OUT/r.tar.xz" -C "$OUT" r && rm -rf "$R"
