#!/usr/bin/env bash
# Last device call of 2026-12-02: every GPU test on the tree as committed (scan int32's new buckets,
# topk bfloat16 at k >= 256, the ops' re-searched policies), the `--against` fresh-process checks of the
# topk-by-k policies (against the spec before k buckets) and of rms_norm's bucketed policies (against the
# spec before the ops were tuned), then the kernels benchmark with the tuned spec (README numbers).
#   git show 233b981^:specs/h200.muh > .dev/against/h200.before-topk-k.muh
#   git show 1afff6d^:specs/h200.muh > .dev/against/h200.before-ops-tune.muh
#   git show e8f5d8a^:specs/h200.muh > .dev/against/h200.before-campaign.muh   (topk at k = 1: the untuned 512 x 11)
#   run(command="DEADLINE_S=545 bash bench/results/wave3-2026-12-02/wave3_run3.sh", carry=[".whl", ".dev/against"], timeout_s=565)
set -u
SECONDS=0
END=${DEADLINE_S:-545}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=/tmp/r; mkdir -p $R
source bench/device_env.sh  # the wheels, paths and cap()
TUNE_ARGS="--batch 12 --runs 10 --confirm-runs 20 --confirm-rounds 3 --jobs 16"
{
  date -u; nvidia-smi -L; nvcc --version | tail -1
  c=$(cap ${TESTS_S:-300}); t0=$SECONDS
  timeout -s KILL $c python3 -m pytest -q -p no:cacheprovider -rfE tests/gpu > $R/gpu-tests.log 2>&1
  echo "rc=$?" >> $R/gpu-tests.log
  echo "== GPU tests $((SECONDS - t0)) s (cap $c): $(tail -3 $R/gpu-tests.log | tr '\n' ' ')"
  grep -E "^(FAILED|ERROR)" $R/gpu-tests.log | head -30
  c=$(cap ${AGAINST_TOPK_S:-60}); t0=$SECONDS
  if [ "$c" -ge 30 ]; then
    echo "== muh tune specs/h200.muh topk --types float32,float16,bfloat16 --topk-shape 152064x1024 --against h200.before-topk-k.muh"
    timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.muh topk --types float32,float16,bfloat16 \
      --topk-shape 152064x1024 --sizes 152064,1216512,9732096 $TUNE_ARGS --db $R/against.sqlite \
      --against .dev/against/h200.before-topk-k.muh
    echo "exit $? ($((SECONDS - t0)) s)"
  else echo "== SKIPPED (deadline): topk --against"; fi
  c=$(cap ${AGAINST_K1_S:-45}); t0=$SECONDS
  if [ "$c" -ge 25 ]; then
    echo "== muh tune specs/h200.muh topk --types float32,float16,bfloat16 --topk-shape 152064x1 --against h200.before-campaign.muh"
    timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.muh topk --types float32,float16,bfloat16 \
      --topk-shape 152064x1 --sizes 152064,1216512,9732096 $TUNE_ARGS --db $R/against.sqlite \
      --against .dev/against/h200.before-campaign.muh
    echo "exit $? ($((SECONDS - t0)) s)"
  else echo "== SKIPPED (deadline): topk k = 1 --against"; fi
  c=$(cap ${AGAINST_OPS_S:-45}); t0=$SECONDS
  if [ "$c" -ge 20 ]; then
    echo "== muh tune specs/h200.muh rms_norm --types bfloat16,float16 --sizes 2^13,2^16,2^20,2^23,2^26 --against h200.before-ops-tune.muh"
    timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.muh rms_norm --types bfloat16,float16 \
      --sizes 2^13,2^16,2^20,2^23,2^26 $TUNE_ARGS --db $R/against.sqlite --against .dev/against/h200.before-ops-tune.muh
    echo "exit $? ($((SECONDS - t0)) s)"
  else echo "== SKIPPED (deadline): rms_norm --against"; fi
  c=$(cap ${BENCH_S:-70}); t0=$SECONDS
  timeout -s KILL $c python3 bench/kernels.py --quick --out-json $R/kernels.json --out-md $R/kernels.md > $R/kernels.log 2>&1
  echo "== kernels bench $((SECONDS - t0)) s (rc $?)"
  grep -E "^\| (reduce|inclusive|exclusive|scan|transform|topk|histogram)" $R/kernels.md | head -60
  date -u; echo "total ${SECONDS} s"
} 2>&1 | tee $R/run.log
cp $R/run.log $R/gpu-tests.log $R/kernels.md $R/kernels.json $OUT/ 2>/dev/null
