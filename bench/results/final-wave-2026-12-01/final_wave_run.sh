#!/usr/bin/env bash
# One device call after the wave's merges (2026-12-01): the tune campaign's topk and transform phases
# with their --against confirmation, the merged kernels' GPU tests (native and warp-64 emulation),
# and the ops refusal repro. Results under $OUT.
#   run(command="bash bench/results/final-wave-2026-12-01/final_wave_run.sh", carry=[".whl", ".dev/tunedb"], timeout_s=590)
set -u
OUT=${OUT:-/tmp/final-out}; mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1 MUH_CACHE_DIR=/tmp/muh-cache MAX_JOBS=16
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 3
t0=$SECONDS
# 1. GPU tests of the merged kernels (in the background: they share the GPU with nothing timed yet)
( timeout -s KILL ${TESTS_S:-150} python3 -m pytest -q -x -p no:cacheprovider tests/gpu/test_kernels_gpu.py \
    $(ls tests/gpu/test_histogram*.py 2>/dev/null) -k "not sanitizer" > "$OUT/gpu-tests.log" 2>&1; echo "rc=$?" >> "$OUT/gpu-tests.log" ) &
tests=$!
timeout -s KILL 60 python3 bench/results/final-wave-2026-12-01/ops_throw_repro.py > "$OUT/ops-throw-repro.log" 2>&1; echo "repro rc=$?" >> "$OUT/ops-throw-repro.log"
wait $tests; echo "tests done at $((SECONDS - t0)) s"; tail -3 "$OUT/gpu-tests.log"
# 2. the tune campaign (timed alone on the GPU)
CONFIRM="topk transform" timeout -s INT ${TUNE_S:-360} bash bench/tune_campaign.sh topk transform confirm
echo "campaign done at $((SECONDS - t0)) s"
grep -E "^== |exit |winner|keeping|kept|speedup per size|score" "$OUT/campaign.log" | head -80
