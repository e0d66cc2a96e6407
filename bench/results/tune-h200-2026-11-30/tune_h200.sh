#!/usr/bin/env bash
# muh tune on the lab H200 (second, final run; see bench/results/tune-h200.md): reduce float16 and
# float32 over the whole space, scan float64 sampled, --apply; then the applied spec is formatted,
# built, explained, checked, and timed against the spec as it was (correctness-gated).
# Usage (device machine, repository root): OUT=/some/dir bash bench/results/tune-h200-2026-11-30/tune_h200.sh
set -u
OUT=${OUT:-/tmp/tune-out}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
fi
muh() { python3 -m muh.cli "$@"; }
DB=$OUT/tune.sqlite
cp specs/h200.muh /tmp/h200.before.muh
{
  date -u; nvidia-smi -L; nvcc --version | tail -1
  COMMON="--db $DB --batch 12 --runs 10 --confirm-runs 20 --confirm-rounds 3"
  echo "== reduce float16, float32: the whole space (budget 200 per type), exhaustive"
  timeout -s INT 110 python3 -m muh.cli tune specs/h200.muh reduce --types float16,float32 --budget 200 --strategy exhaustive $COMMON --apply --plot "$OUT/tune-reduce.png"; echo "exit $?"
  echo "== scan float64: 60 variants in random order"
  timeout -s INT 60 python3 -m muh.cli tune specs/h200.muh scan --types float64 --budget 60 $COMMON --apply --plot "$OUT/tune-scan.png"; echo "exit $?"
  echo "== the applied spec"
  diff /tmp/h200.before.muh specs/h200.muh
  muh fmt --check specs/h200.muh; echo "fmt exit $?"
  muh build specs/h200.muh -o /tmp/h200-gen; echo "build exit $?"
  muh explain specs/h200.muh reduce.float16 | head -12
  muh check specs/h200.muh --only measured -v; echo "check exit $?"
  echo "== tuned against untuned (fresh process, fresh poisoned inputs)"
  timeout -s INT 35 python3 -m muh.cli tune specs/h200.muh reduce --types float16,float32 --against /tmp/h200.before.muh --db $DB; echo "exit $?"
  timeout -s INT 35 python3 -m muh.cli tune specs/h200.muh scan --types float64 --against /tmp/h200.before.muh --db $DB; echo "exit $?"
  date -u
} 2>&1 | tee "$OUT/run.log"
cp specs/h200.muh "$OUT/h200.after.muh"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$DB"
rm -f "$DB-wal" "$DB-shm"
