#!/usr/bin/env bash
# One device call for issue 16's client and silu_and_mul: the client's GPU tests (+ the silu_and_mul op
# tests), the silu_and_mul grid cells, the decode-step bench. Results: bench/results/h200-client.md.
#   rsync -a --delete --exclude .git --exclude .venv --exclude .muh-cache /work/wt/client/ /work/main/.dev/client/
#   run(command="cd .dev/client && bash bench/results/client-2026-12-01/client_run.sh", carry=[".dev/client", ".whl"], timeout_s=240)
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ../../.whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
[[ -x tools/ninja ]] && export PATH=$PWD/tools:$PATH
export MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1 MAX_JOBS=16
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
t0=$SECONDS
timeout -s KILL ${TEST_S:-110} python3 -m pytest tests/gpu/test_hf_client_gpu.py tests/gpu/test_torch_ops_gpu.py \
  -k "hf_client or silu" -v -s -rfEs -p no:cacheprovider --durations=5 > "$OUT/client_tests.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"
grep -E "PASSED|FAILED|ERROR|SKIPPED|agreement|graph replay" "$OUT/client_tests.log" | grep -v "silu_and_mul_shard_widths.*PASSED" \
  | sed 's/ *\[.*%\]//' | head -40; tail -3 "$OUT/client_tests.log"
timeout -s KILL ${SILU_S:-40} python3 bench/ops_grid.py --match silu --tokens 4096,16384 \
  --out-md "$OUT/silu.md" --out-json "$OUT/silu.json" > "$OUT/silu.log" 2>&1
echo "silu cells rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; cat "$OUT/silu.md" 2>/dev/null || tail -5 "$OUT/silu.log"
timeout -s KILL ${BENCH_S:-80} python3 bench/hf_decode.py --out-md "$OUT/decode.md" --out-json "$OUT/decode.json" \
  > "$OUT/decode.log" 2>&1
echo "decode bench rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; cat "$OUT/decode.md" 2>/dev/null || tail -8 "$OUT/decode.log"
