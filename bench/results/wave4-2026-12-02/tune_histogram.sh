#!/usr/bin/env bash
# Issue 20's last family: histogram searched on the H200, one type after another, resumable through
# its database (copy the returned $OUT/histogram.sqlite to .dev/tunedb/histogram.sqlite and carry
# .dev/tunedb to the next call; trials measured before are not measured again). Each type: the whole
# space (75 variants: threads x pixels_per_thread x sub_histograms), CCCL's sizes, --apply, then
# --against the spec as it was before this script's first call (.dev/against/h200.before-histogram.muh).
#   cp specs/h200.muh .dev/against/h200.before-histogram.muh          # once, before the first call
#   run(command="DEADLINE_S=540 bash bench/results/wave4-2026-12-02/tune_histogram.sh", carry=[".whl", ".dev/tunedb", ".dev/against"], timeout_s=560)
# then copy $OUT/h200.muh over specs/h200.muh (the winners with their evidence) and rebuild generated/.
set -u
SECONDS=0
END=${DEADLINE_S:-540}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=/tmp/r; mkdir -p $R
source bench/device_env.sh  # the wheels, paths and cap()
DB=$R/histogram.sqlite  # beside it: tune-units/ (many files; they stay on the machine)
[ -f .dev/tunedb/histogram.sqlite ] && cp .dev/tunedb/histogram.sqlite $DB
ARGS="--strategy exhaustive --batch 12 --runs 10 --confirm-runs 20 --confirm-rounds 3 --jobs 16 --db $DB"
OLD=.dev/against/h200.before-histogram.muh
{
  date -u; nvidia-smi -L
  for t in ${TYPES:-float32 uint8 int32 float64 uint16 int16 uint32 int8}; do
    c=$(cap ${TYPE_S:-150}); t0=$SECONDS
    if [ "$c" -lt 40 ]; then echo "== SKIPPED (deadline): histogram $t"; continue; fi
    echo "== muh tune specs/h200.muh histogram --types $t --apply (cap ${c}s)"
    timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.muh histogram --types $t $ARGS --apply
    echo "exit $? ($((SECONDS - t0)) s)"
    c=$(cap ${AGAINST_S:-40})
    if [ -f $OLD ] && [ "$c" -ge 20 ]; then
      timeout -k 5 -s INT $c python3 -m muh.cli tune specs/h200.muh histogram --types $t $ARGS --against $OLD
      echo "against exit $?"
    fi
  done
  [ -f $OLD ] && { echo "== the applied spec"; diff $OLD specs/h200.muh; }
  python3 -m muh.cli check specs/h200.muh --only measured
  date -u; echo "total $SECONDS s"
} 2>&1 | tee $R/run.log
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" $DB 2>/dev/null
cp $R/run.log specs/h200.muh $DB $OUT/ 2>/dev/null
