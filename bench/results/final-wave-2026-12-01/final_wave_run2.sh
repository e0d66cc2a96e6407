#!/usr/bin/env bash
# Second device call after the wave's merges (2026-12-01, all eight branches on main): GPU tests of the
# merged kernels (histogram included, native and warp-64 emulation), the topk campaign over the widened
# space (float32/float16/bfloat16, bfloat16 after the harness fix) with its --against confirmation, the
# kernels benchmark with the tuned spec (README numbers), and a backtrace of the ops refusal crash.
#   run(command="bash bench/results/final-wave-2026-12-01/final_wave_run2.sh", carry=[".whl"], timeout_s=590)
# Everything lands in $OUT/results.tar.gz (+ the summary files beside it).
set -u
OUT=${OUT:-/tmp/final2-out}; mkdir -p "$OUT"; R=/tmp/r; mkdir -p $R
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1 MUH_CACHE_DIR=/tmp/muh-cache MAX_JOBS=16
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
t0=$SECONDS
timeout -s KILL ${TESTS_S:-120} python3 -m pytest -q -x -p no:cacheprovider tests/gpu/test_kernels_gpu.py tests/gpu/test_histogram_gpu.py \
  > $R/gpu-tests.log 2>&1; echo "rc=$?" >> $R/gpu-tests.log
echo "tests $((SECONDS - t0)) s: $(tail -2 $R/gpu-tests.log | tr '\n' ' ')"
( export OUT=$R; CONFIRM=topk TOPK_CAP=${TOPK_CAP:-60} timeout -s INT ${TUNE_S:-250} bash bench/tune_campaign.sh topk confirm > /dev/null 2>&1 )
echo "campaign $((SECONDS - t0)) s"
grep -E "^== |decision|applied|speedup per size|exit " $R/campaign.log | head -40
timeout -s KILL ${BENCH_S:-130} python3 bench/kernels.py --out-json $R/kernels.json --out-md $R/kernels.md > $R/kernels.log 2>&1
echo "kernels bench $((SECONDS - t0)) s (rc $?)"; grep -E "^\| (reduce|scan|transform|topk|histogram)" $R/kernels.md | head -30
timeout -s KILL 60 cuda-gdb -batch -ex run -ex bt --args python3 bench/results/final-wave-2026-12-01/ops_throw_repro.py > $R/ops-throw-gdb.log 2>&1
echo "repro $((SECONDS - t0)) s"; grep -E "^#[0-9]+ " $R/ops-throw-gdb.log | head -25
cp $R/h200.muh $OUT/h200.muh 2>/dev/null; cp $R/kernels.md $OUT/ 2>/dev/null
tar czf $OUT/results.tar.gz -C $R .
