#!/usr/bin/env bash
# Second call (run from the prepared .dev/topk-small, see run.sh): why emu128 faulted (one process per case, in parallel; memcheck on a small case) and the
# GPU tests of every other variant (the first call's fault ended its process before they ran).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export MUH_CACHE_DIR=$PWD/.cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
E=.cache/capi-155926adaf71e194/libmuh_kernels.so; B=.cache/capi-39502829d58ac184/libmuh_kernels.so
E64=.cache/capi-7b02911619a228d2/libmuh_kernels.so
t0=$SECONDS
timeout -s KILL 60 python3 -m pytest tests/gpu/test_topk_small_gpu.py -k "not emu128" -q -rfE -p no:cacheprovider > "$OUT/pytest2.log" 2>&1 &
pt=$!
i=0; pids=()
for c in "$E float32 4096 256 8 ties" "$E float32 4 256 8 ties" "$E float32 1 256 8 ties" "$E float32 4 512 8 ties" \
         "$E float32 4 256 8 equal" "$E float32 4 256 8 normal" "$E float32 4096 256 8 normal 2" "$E float32 4 64 8 ties" \
         "$E float16 4 256 8 ties" "$B float32 4096 256 8 ties" "$B float32 4 256 8 ties" "$E64 float32 4096 256 8 ties"; do
  timeout -s KILL 30 python3 bench/results/topk-small-2026-12-06/repro.py $c > "$OUT/r$i.txt" 2>&1 & pids+=($!); i=$((i+1))
done
wait "${pids[@]}"
cat "$OUT"/r*.txt > "$OUT/repro.txt"; rm -f "$OUT"/r[0-9]*.txt
grep -E "^(OK|BAD|FAULT)|Error" "$OUT/repro.txt" | sort | uniq; echo "repro $((SECONDS - t0)) s"
timeout -s KILL 45 compute-sanitizer --tool memcheck --print-limit 3 python3 bench/results/topk-small-2026-12-06/repro.py $E float32 4 256 8 ties \
  > "$OUT/memcheck.log" 2>&1; echo "memcheck rc=$? $((SECONDS - t0)) s"
grep -E "Invalid|at 0x|by thread|Address|ERROR SUMMARY|topk|\.cuh:" "$OUT/memcheck.log" | head -24
wait $pt; echo "pytest rc=$? $((SECONDS - t0)) s"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest2.log" | head -20
