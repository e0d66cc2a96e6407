#!/usr/bin/env bash
# Second device call of 2026-12-02 (issues 16, 20, 17):
# 1. the ops' policies searched again after the harness fix (each hidden's launch on its own slice, so
#    every launch starts from a cold L2): rms_norm and silu_and_mul x bfloat16 and float16, buckets at
#    rows x hidden = 2^22, four searches side by side, then --apply one after the other (from the DBs);
# 2. the issue-16 grid (bench/ops_grid.py) with the re-tuned spec;
# 3. the scan lab: the warp-specialised ring (bench/scan_lab/lab.cu, prebuilt here: bench/scan_lab/bin/lab).
#   run(command="DEADLINE_S=560 bash bench/results/wave3-2026-12-02/wave3_run2.sh", carry=[".whl", "bench/scan_lab/bin"], timeout_s=590)
set -u
SECONDS=0
END=${DEADLINE_S:-560}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=/tmp/w; mkdir -p $W
source bench/device_env.sh  # the wheels, paths and cap()
cp specs/h200.muh $W/h200.before.muh
SIZES=2^13,2^16,2^20,2^23,2^26
ARGS="--buckets 2^22 --sizes $SIZES --strategy exhaustive --batch 6 --confirm-top 2"
{
  date -u; nvidia-smi -L
  c=$(cap ${TUNE_S:-170}); t0=$SECONDS
  for fam in rms_norm silu_and_mul; do
    for t in bfloat16 float16; do
      ( timeout -s INT $c python3 -m muh.cli tune specs/h200.muh $fam --types $t $ARGS --jobs 4 \
          --db "$W/$fam-$t.sqlite" > "$W/$fam-$t.log" 2>&1; echo "$fam $t rc=$? $((SECONDS-t0)) s" ) &
    done
  done
  wait
  echo "== ops tune $((SECONDS - t0)) s"
  for fam in rms_norm silu_and_mul; do
    for t in bfloat16 float16; do
      echo "== $fam $t"; grep -E "^decision|^applied|variants in the space|^top|^│ ★" "$W/$fam-$t.log" | head -12
      c=$(cap 30)
      [ "$c" -ge 10 ] && timeout -s INT $c python3 -m muh.cli tune specs/h200.muh $fam --types $t $ARGS --jobs 16 \
        --db "$W/$fam-$t.sqlite" --apply > "$W/$fam-$t.apply.log" 2>&1
      echo "apply rc=$?"; grep -E "^decision|^applied" "$W/$fam-$t.apply.log"
    done
  done
  echo "== the applied spec"; diff $W/h200.before.muh specs/h200.muh
  python3 -m muh.cli check specs/h200.muh --only measured
  c=$(cap ${GRID_S:-110}); t0=$SECONDS
  timeout -s KILL $c python3 bench/ops_grid.py --out-md $W/grid.md --out-json $W/grid.json > $W/grid.log 2>&1
  echo "== ops grid $((SECONDS - t0)) s (rc $?)"; cat $W/grid.md 2>/dev/null || tail -20 $W/grid.log
  c=$(cap ${LAB_S:-170}); t0=$SECONDS
  echo "== scan lab (cap $c s)"
  timeout -s KILL $c bench/scan_lab/bin/lab 3> $W/lab.tsv > $W/lab.txt 2> $W/lab.err
  echo "lab rc=$? $((SECONDS - t0)) s"; cat $W/lab.txt; tail -30 $W/lab.err
  date -u; echo "total $SECONDS s"
} 2>&1 | tee $W/run.log
for d in $W/*.sqlite; do
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$d" 2>/dev/null
done
cp specs/h200.muh $OUT/h200.muh
tar czf $OUT/w.tar.gz -C $W --exclude='*.sqlite-*' --exclude=tune-units .
cp $W/run.log $W/grid.md $W/lab.txt $OUT/ 2>/dev/null
