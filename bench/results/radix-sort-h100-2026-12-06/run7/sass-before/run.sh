#!/usr/bin/env bash
# Session 3 of 2026-12-06, device call 5: segmented reduce with vectorised full tiles (every GPU test, the benchmark);
# radix sort's onesweep kernel, muh vs CUB, per SASS instruction (ncu source view: executed instructions, stalls).
# run(command="bash .dev/call5.sh", carry=[".dev/radix2", ".dev/segred", ".dev/call5.sh"])
set -o pipefail
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p "$R/segred" "$R/radix"
top=$PWD/.dev
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$top"/radix2/.whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/device.txt"
t0=$SECONDS
cd "$top/segred" || exit 5
[ -d .muh-cache ] || tar -xJf muh-cache.tar.xz || exit 6
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
timeout -s KILL 120 python3 -m pytest tests/gpu/test_segmented_reduce_gpu.py -q -rfE -p no:cacheprovider > "$R/segred/pytest.log" 2>&1
echo "seg tests rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; tail -2 "$R/segred/pytest.log"; grep -E "^(FAILED|ERROR)|^E  " "$R/segred/pytest.log" | head -8
timeout -s KILL 90 python3 bench/segmented_reduce.py --cache .muh-cache/bench --split --out-md "$R/segred/seg.md" --out-json "$R/segred/seg.json" > "$R/segred/bench.log" 2>&1
echo "seg bench rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; tail -10 "$R/segred/bench.log"
cd "$top/radix2" || exit 4
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
for who in "muh:regex:onesweep_kernel" "cub:regex:DeviceRadixSortOnesweepKernel"; do
  name=${who%%:*}; k=${who#*:}
  timeout -s KILL 90 ncu --clock-control none --section SourceCounters --section WarpStateStats --section InstructionStats --import-source no --kernel-name "$k" --launch-skip 5 --launch-count 1 -o "$R/radix/$name" python3 bench/radix_profile.py --gen .gen/h200 --log2 26 --cache "$PWD/.muh-cache/bench" > "$R/radix/ncu-$name.log" 2>&1
  echo "ncu $name rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"
  ncu -i "$R/radix/$name.ncu-rep" --page source --csv --print-source sass > "$R/radix/sass-$name.csv" 2> "$R/radix/sass-$name.err"
  echo "source page $name rc=$? lines $(wc -l < "$R/radix/sass-$name.csv")"; head -c 600 "$R/radix/sass-$name.csv"; echo
  ncu -i "$R/radix/$name.ncu-rep" --page details > "$R/radix/details-$name.txt" 2>&1
  rm -f "$R/radix/$name.ncu-rep"
done
tar -cJf "$OUT/r.tar.xz" -C "$OUT" r && rm -rf "$R"
