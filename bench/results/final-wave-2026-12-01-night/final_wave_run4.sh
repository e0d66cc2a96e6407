#!/usr/bin/env bash
# Device call after the 2026-12-01 night merges (size buckets for every kernel family, topk by k, the
# ops' own tuned policies, the scan ring): every GPU test on the merged tree, the kernels benchmark with
# the tuned spec (README numbers), then the campaign's two open searches while time is left:
# topk bfloat16 at k >= 256 (resumes the topk-by-k DB) and reduce float16 (whole space, random order).
#   run(command="DEADLINE_S=560 bash bench/results/final-wave-2026-12-01-night/final_wave_run4.sh", carry=[".whl", ".dev/tunedb"], timeout_s=590)
set -u
SECONDS=0
END=${DEADLINE_S:-560}
OUT=${OUT:-/tmp/final4-out}; mkdir -p "$OUT/plots"; R=/tmp/r; mkdir -p $R
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1 MUH_CACHE_DIR=/tmp/muh-cache MAX_JOBS=16
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export PATH=/tmp/site/bin:$PATH
cap() {  # seconds a step may take: its own cap, cut to end 10 s before the deadline
  local c=$1 left=$((END - SECONDS - 10)); [ "$left" -lt "$c" ] && c=$left; echo $c
}
cp specs/h200.muh "$OUT/h200.before.muh"
{
  date -u; nvidia-smi -L; nvcc --version | tail -1
  c=$(cap ${TESTS_S:-300}); t0=$SECONDS
  timeout -s KILL $c python3 -m pytest -q -p no:cacheprovider -rfE tests/gpu > $R/gpu-tests.log 2>&1
  echo "rc=$?" >> $R/gpu-tests.log
  echo "== GPU tests $((SECONDS - t0)) s (cap $c): $(tail -3 $R/gpu-tests.log | tr '\n' ' ')"
  grep -E "^(FAILED|ERROR)" $R/gpu-tests.log | head -30
  c=$(cap ${BENCH_S:-120}); t0=$SECONDS
  timeout -s KILL $c python3 bench/kernels.py --quick --out-json $R/kernels.json --out-md $R/kernels.md > $R/kernels.log 2>&1
  echo "== kernels bench $((SECONDS - t0)) s (rc $?)"; grep -E "^\| (reduce|inclusive|exclusive|scan|transform|topk|histogram)" $R/kernels.md | head -60
  DB=$OUT/tune-topk-k.sqlite; [ -f .dev/tunedb/topk-k.sqlite ] && cp .dev/tunedb/topk-k.sqlite "$DB"
  c=$(cap ${TOPK_S:-80})
  if [ "$c" -ge 20 ]; then
    echo "== muh tune specs/h200.muh topk --types bfloat16 --buckets k:256 --topk-shape 152064x1024 --apply (cap ${c}s)"
    timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.muh topk --types bfloat16 --buckets k:256 \
      --topk-shape 152064x1024 --sizes 152064,1216512,9732096 --strategy exhaustive --batch 12 --runs 10 \
      --confirm-runs 20 --confirm-rounds 3 --jobs 16 --db "$DB" --apply --plot "$OUT/plots/tune-topk-k1024-bfloat16.png"
    echo "exit $?"
  else echo "== SKIPPED (deadline): topk bfloat16 k >= 256"; fi
  DB2=$OUT/tune-reduce.sqlite
  c=$(cap ${REDUCE_S:-70})
  if [ "$c" -ge 20 ]; then
    echo "== muh tune specs/h200.muh reduce --types float16 --strategy random --apply (cap ${c}s)"
    timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.muh reduce --types float16 --strategy random \
      --db "$DB2" --batch 12 --runs 10 --confirm-runs 20 --confirm-rounds 3 --jobs 16 --apply \
      --plot "$OUT/plots/tune-reduce-float16.png"
    echo "exit $?"
  else echo "== SKIPPED (deadline): reduce float16"; fi
  echo "== the applied spec"; diff "$OUT/h200.before.muh" specs/h200.muh
  python3 -m muh.cli check specs/h200.muh --only measured; echo "measured check exit $?"
  date -u; echo "total ${SECONDS} s"
} 2>&1 | tee "$OUT/run.log"
cp specs/h200.muh "$OUT/h200.muh"
for d in "$OUT"/*.sqlite; do
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$d" 2>/dev/null
done
rm -f "$OUT"/*.sqlite-wal "$OUT"/*.sqlite-shm
cp $R/kernels.md $R/gpu-tests.log $OUT/ 2>/dev/null
tar czf $OUT/results.tar.gz -C $R .
