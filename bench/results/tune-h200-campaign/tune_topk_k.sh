#!/usr/bin/env bash
# Issues 20 and 16 (must-have 3, topk) on the lab H200: topk policies chosen by k. First the GPU test of
# the k dispatch (k on both sides of 256 vs torch.topk), then per type (float32, float16, bfloat16)
#   muh tune specs/h200.muh topk --types T --buckets k:256 --topk-shape 152064x1024 --apply
# (bucket `k < 256` keeps the k = 50 sampling policy measured by the campaign; bucket `k >= 256` is
# searched over the spec's whole topk space at k = 1024, rows of 152064 = the vocabulary, 1/8/64 rows),
# then, while time is left, each type `--against` the spec as it was (fresh process, at k = 1024).
# Every command is cut to the call's deadline (SIGINT: the trials so far stay in the DB; the same
# command resumes with it). Results under $OUT (bench/results/tune-h200-campaign.md, "topk by k").
#   run(command="cd .dev/topk && DEADLINE_S=200 bash bench/results/tune-h200-campaign/tune_topk_k.sh", carry=[".dev/topk", ".whl"], timeout_s=225)
set -u
SECONDS=0
END=${DEADLINE_S:-200}
OUT=${OUT:-/tmp/tune-topk-k}
mkdir -p "$OUT/plots"
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1 MUH_CACHE_DIR=/tmp/muh-cache
WHL=$(ls -d ../../.whl .whl 2>/dev/null | head -1)
if [ -n "$WHL" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$WHL"/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 3
fi
DB=$OUT/tune.sqlite
[ -f .dev/tunedb/topk-k.sqlite ] && cp .dev/tunedb/topk-k.sqlite "$DB"  # resume a call cut short
cp specs/h200.muh "$OUT/h200.before.muh"
[ -f .dev/tunedb/h200.muh ] && cp .dev/tunedb/h200.muh specs/h200.muh  # the spec as the last call left it
COMMON="--sizes 152064,1216512,9732096 --strategy exhaustive --batch 12 --runs 10 --confirm-runs 20 --confirm-rounds 3 --jobs 16 --db $DB"
TYPES=${TYPES:-float32 float16 bfloat16}
save() {
  cp specs/h200.muh "$OUT/h200.muh"
  tar czf "$OUT/plots.tar.gz" -C "$OUT" plots 2>/dev/null
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$DB" 2>/dev/null
  rm -f "$DB-wal" "$DB-shm"
}
{
  date -u; nvidia-smi -L; nvcc --version | tail -1
  echo "== GPU test: topk by k (tests/gpu/test_topk_buckets_gpu.py)"
  t0=$SECONDS
  timeout -s KILL 70 python3 -m pytest -q -p no:cacheprovider -rfE tests/gpu/test_topk_buckets_gpu.py
  echo "pytest exit $? ($((SECONDS - t0)) s)"
  for t in $TYPES; do
    cap=$((END - SECONDS - 8))
    if [ "$cap" -lt 20 ]; then echo "== SKIPPED (deadline): topk $t"; continue; fi
    echo "== muh tune specs/h200.muh topk --types $t --buckets k:256 --topk-shape 152064x1024 $COMMON --apply (cap ${cap}s)"
    t0=$SECONDS
    timeout -k 5 -s INT "$cap" python3 -m muh.cli tune specs/h200.muh topk --types "$t" --buckets k:256 \
      --topk-shape 152064x1024 $COMMON --apply --plot "$OUT/plots/tune-topk-k1024-$t.png"
    echo "exit $? ($((SECONDS - t0)) s)"
    save
  done
  for t in $TYPES; do  # the --against gates after every search (the searches come first)
    cap=$((END - SECONDS - 5))
    if [ "$cap" -lt 15 ]; then echo "== SKIPPED (deadline): --against for $t"; continue; fi
    python3 -c "import sys; from muh.pipeline import load_file; sys.exit(0 if load_file('specs/h200.muh').derived.algorithms['topk@h200'].policies[sys.argv[1]].buckets else 1)" "$t" \
      || { echo "== $t: no k buckets written (incumbent kept): no --against"; continue; }
    echo "== muh tune specs/h200.muh topk --types $t --topk-shape 152064x1024 --against h200.before.muh (cap ${cap}s)"
    t0=$SECONDS
    timeout -k 5 -s INT "$cap" python3 -m muh.cli tune specs/h200.muh topk --types "$t" --topk-shape 152064x1024 \
      --sizes 152064,1216512,9732096 --confirm-runs 20 --confirm-rounds 3 --jobs 16 --db "$DB" \
      --against "$OUT/h200.before.muh"
    echo "exit $? ($((SECONDS - t0)) s)"
  done
  echo "== the applied spec"
  diff "$OUT/h200.before.muh" specs/h200.muh
  python3 -m muh.cli fmt --check specs/h200.muh; echo "fmt exit $?"
  python3 -m muh.cli explain specs/h200.muh topk.float32.threads
  date -u; echo "total ${SECONDS} s"
} 2>&1 | tee "$OUT/run.log"
save
