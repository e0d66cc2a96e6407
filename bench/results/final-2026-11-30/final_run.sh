#!/usr/bin/env bash
# Final confirmation on the lab H200 (one device call, after the follow-up fixes):
#   run(command="bash bench/results/final-2026-11-30/final_run.sh", carry=[".whl"], timeout_s=330)
# 1. the full LLM-ops benchmark table (bench/ops.py) with the committed kernels,
# 2. the kernels benchmark (bench/kernels.py) to compare with the committed bench/results/h200.md,
# 3. the torch-extension test. Results under $OUT.
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1 MAX_JOBS=16
t0=$SECONDS
timeout -s KILL 120 python3 bench/ops.py --build-only > "$OUT/build.log" 2>&1 &
timeout -s KILL 150 python3 -c "
import sys; sys.path.insert(0, 'bench'); from pathlib import Path; import kernels as kb
kb.build_cub(Path('.muh-cache/bench')); kb.build_variants(Path('.muh-cache/bench'))" >> "$OUT/build.log" 2>&1 &
timeout -s KILL 170 python3 -m pytest tests/gpu/test_torch_extension.py -q -rfE -p no:cacheprovider > "$OUT/torch_ext.log" 2>&1 &
e=$!
wait %1 %2; echo "build $((SECONDS-t0)) s"
timeout -s KILL 90 python3 bench/ops.py --out-md "$OUT/h200-ops.md" --out-json "$OUT/h200-ops.json" > "$OUT/ops_bench.log" 2>&1
echo "ops bench $((SECONDS-t0)) s (rc $?)"
timeout -s KILL 120 python3 bench/kernels.py --out-json "$OUT/h200.json" --out-md "$OUT/h200.md" > "$OUT/kernels_bench.log" 2>&1
echo "kernels bench $((SECONDS-t0)) s (rc $?)"
wait $e; tail -3 "$OUT/torch_ext.log"
cat "$OUT/h200-ops.md" | head -60; grep -E "^\| (reduce|scan|transform|topk) " "$OUT/h200.md" | head -20
