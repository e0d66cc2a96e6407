#!/usr/bin/env bash
# topk's small-row path (warp_cols): before/after timings, alternating in one process, and the GPU tests,
# in one device call (2026-12-06). Prepared on the CPU machine (no GPU there, nothing built on the device):
#   the branch's files copied to .dev/topk-small of the session checkout (carried), with
#   .before/  = generated/h200 at 66e8a41 (`git archive 66e8a41 generated/h200 | tar -x -C .before`),
#   .whl/     = the test run's Python deps for cp312 (lark, interegular, regex, pydantic(-core), annotated_types,
#               typing_inspection, typing_extensions, pytest, pluggy, iniconfig, pygments, packaging),
#   .cache/   = every library loaded here, built for sm_90:
#     MUH_CACHE_DIR=$PWD/.cache python3 bench/results/topk-small-2026-12-06/prebuild.py .before/generated/h200 generated/h200
# then: run(command="cd .dev/topk-small && bash bench/results/topk-small-2026-12-06/run.sh", carry=[".dev/topk-small"])
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export MUH_CACHE_DIR=$PWD/.cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
t0=$SECONDS
timeout -s KILL 70 python3 bench/topk_small_ab.py --before .before/generated/h200 --after generated/h200 \
  --rounds 2 --repeats 5 --out-json "$OUT/ab.json" --out-md "$OUT/ab.md" > "$OUT/bench.log" 2>&1
echo "bench rc=$? $((SECONDS - t0)) s"; cat "$OUT/ab.md" 2>/dev/null || tail -20 "$OUT/bench.log"
t0=$SECONDS
timeout -s KILL 70 python3 -m pytest tests/gpu/test_topk_small_gpu.py -q -rfE -p no:cacheprovider > "$OUT/pytest.log" 2>&1
echo "pytest rc=$? $((SECONDS - t0)) s"; grep -E "^(FAILED|ERROR)|Error|assert |passed|failed" "$OUT/pytest.log" | head -30
