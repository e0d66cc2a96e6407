#!/usr/bin/env bash
# First device call of 2026-12-02 (issues 16, 20, 17): the k- and size-bucket GPU tests, the issue-16
# ops grid with the tuned spec (every column in one run), topk bfloat16 at k >= 256 searched and applied,
# the `--against` fresh-process checks of the topk-by-k and the ops' bucketed policies against the specs
# before those tunes, then scan int32 over the ring's dimensions and float32's < 2^24 bucket with 2^16.
#   git show 233b981^:specs/h200.muh > .dev/against/h200.before-topk-k.muh
#   git show 1afff6d^:specs/h200.muh > .dev/against/h200.before-ops-tune.muh
#   run(command="DEADLINE_S=565 bash bench/results/wave3-2026-12-02/wave3_run1.sh", carry=[".whl", ".dev/tunedb", ".dev/against"], timeout_s=590)
set -u
SECONDS=0
END=${DEADLINE_S:-565}
OUT=${OUT:-/tmp/wave3-out}; mkdir -p "$OUT/plots"; R=/tmp/r; mkdir -p $R
source bench/device_env.sh  # the wheels, paths and cap()
TUNE_ARGS="--batch 12 --runs 10 --confirm-runs 20 --confirm-rounds 3 --jobs 16"
TOPK_SHAPE="--topk-shape 152064x1024 --sizes 152064,1216512,9732096"
OPS_SIZES="--sizes 2^13,2^16,2^20,2^23,2^26"
cp specs/h200.muh "$OUT/h200.before.muh"
{
  date -u; nvidia-smi -L; nvcc --version | tail -1
  c=$(cap ${TESTS_S:-100}); t0=$SECONDS
  timeout -s KILL $c python3 -m pytest -q -p no:cacheprovider -rfE tests/gpu/test_topk_buckets_gpu.py \
    tests/gpu/test_ops_buckets_gpu.py > $R/gpu-tests.log 2>&1
  echo "rc=$?" >> $R/gpu-tests.log
  echo "== bucket GPU tests $((SECONDS - t0)) s (cap $c): $(tail -3 $R/gpu-tests.log | tr '\n' ' ')"
  grep -E "^(FAILED|ERROR)" $R/gpu-tests.log | head -30
  c=$(cap ${GRID_S:-110}); t0=$SECONDS
  timeout -s KILL $c python3 bench/ops_grid.py --out-md $R/grid.md --out-json $R/grid.json > $R/grid.log 2>&1
  echo "== ops grid $((SECONDS - t0)) s (rc $?)"; cat $R/grid.md 2>/dev/null || tail -20 $R/grid.log
  DB=$OUT/tune-topk-k.sqlite; [ -f .dev/tunedb/topk-k.sqlite ] && cp .dev/tunedb/topk-k.sqlite "$DB"
  c=$(cap ${TOPK_S:-120}); t0=$SECONDS
  if [ "$c" -ge 30 ]; then
    echo "== muh tune specs/h200.muh topk --types bfloat16 --buckets k:256 $TOPK_SHAPE --apply (cap ${c}s)"
    timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.muh topk --types bfloat16 --buckets k:256 $TOPK_SHAPE \
      --strategy exhaustive $TUNE_ARGS --db "$DB" --apply --plot "$OUT/plots/tune-topk-k1024-bfloat16.png"
    echo "exit $? ($((SECONDS - t0)) s)"
  else echo "== SKIPPED (deadline): topk bfloat16 k >= 256"; fi
  c=$(cap ${AGAINST_TOPK_S:-75}); t0=$SECONDS
  if [ "$c" -ge 30 ]; then
    echo "== muh tune specs/h200.muh topk --types float32,float16,bfloat16 $TOPK_SHAPE --against h200.before-topk-k.muh"
    timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.muh topk --types float32,float16,bfloat16 $TOPK_SHAPE \
      $TUNE_ARGS --db $OUT/against.sqlite --against .dev/against/h200.before-topk-k.muh
    echo "exit $? ($((SECONDS - t0)) s)"
  else echo "== SKIPPED (deadline): topk --against"; fi
  for fam in rms_norm silu_and_mul; do
    c=$(cap ${AGAINST_OPS_S:-40}); t0=$SECONDS
    if [ "$c" -ge 20 ]; then
      echo "== muh tune specs/h200.muh $fam --types bfloat16,float16 $OPS_SIZES --against h200.before-ops-tune.muh"
      timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.muh $fam --types bfloat16,float16 $OPS_SIZES \
        $TUNE_ARGS --db $OUT/against.sqlite --against .dev/against/h200.before-ops-tune.muh
      echo "exit $? ($((SECONDS - t0)) s)"
    else echo "== SKIPPED (deadline): $fam --against"; fi
  done
  # scan: the ring's dimensions for int32 (never searched on the ring), float32's < 2^24 bucket with 2^16
  python3 - <<'PY'
s = open("specs/h200.muh").read()
a = s.index("algorithm scan on h200 {"); b = s.index("algorithm", a + 10)
blk = s[a:b]; i = blk.index("  space {"); j = blk.index("  }\n", i)
blk = blk[:i] + "  space {\n    passes = [2, 4]\n    stages = [1, 3, 4]\n    window = [32, 128]\n" + blk[j:]
open("specs/h200.scan.muh", "w").write(s[:a] + blk + s[b:])
PY
  cp specs/h200.scan.muh "$OUT/h200.scan.before.muh"
  c=$(cap ${SCAN_I32_S:-110}); t0=$SECONDS
  if [ "$c" -ge 40 ]; then
    echo "== muh tune specs/h200.scan.muh scan --types int32 --buckets 2^24 --sizes 2^16,2^20,2^24,2^28 --apply (cap ${c}s)"
    timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.scan.muh scan --types int32 --buckets 2^24 \
      --sizes 2^16,2^20,2^24,2^28 --strategy exhaustive $TUNE_ARGS --db $OUT/tune-scan.sqlite --apply
    echo "exit $? ($((SECONDS - t0)) s)"
  else echo "== SKIPPED (deadline): scan int32"; fi
  c=$(cap ${SCAN_F32_S:-70}); t0=$SECONDS
  if [ "$c" -ge 30 ]; then
    echo "== muh tune specs/h200.scan.muh scan --types float32 --sizes 2^16,2^20 --apply (cap ${c}s)"
    timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.scan.muh scan --types float32 --sizes 2^16,2^20 \
      --strategy exhaustive $TUNE_ARGS --db $OUT/tune-scan.sqlite --apply
    echo "exit $? ($((SECONDS - t0)) s)"
  else echo "== SKIPPED (deadline): scan float32 < 2^24"; fi
  echo "== the applied spec"; diff "$OUT/h200.before.muh" specs/h200.muh
  echo "== the scan copy"; diff "$OUT/h200.scan.before.muh" specs/h200.scan.muh
  python3 -m muh.cli check specs/h200.muh --only measured; echo "measured check exit $?"
  date -u; echo "total ${SECONDS} s"
} 2>&1 | tee "$OUT/run.log"
cp specs/h200.muh specs/h200.scan.muh "$OUT/"
for d in "$OUT"/*.sqlite; do
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$d" 2>/dev/null
done
rm -f "$OUT"/*.sqlite-wal "$OUT"/*.sqlite-shm
cp $R/grid.md $R/grid.json $R/gpu-tests.log $R/grid.log $OUT/ 2>/dev/null
