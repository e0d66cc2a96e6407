#!/usr/bin/env bash
# Issue 16 must-have 3 on the lab H200: scan float64 searched per size bucket (threads 256 vs 384;
# bucket `elements < 2^24` measured at 2^16, bucket `elements >= 2^24` at 2^24, 2^26, 2^28), decided
# per bucket by the no-regression rule and applied with `--apply`; then the applied spec is
# formatted, explained and built, and its scan compiled. Results under $OUT
# (bench/results/tune-h200-buckets.md).
#   run(command="cd .dev/buckets && bash bench/results/tune-buckets-2026-12-01/tune_buckets.sh", carry=[".dev/buckets", ".whl"], timeout_s=110)
set -u
OUT=${OUT:-/tmp/tune-buckets}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1 MUH_CACHE_DIR=/tmp/muh-cache
WHL=$(ls -d ../../.whl .whl 2>/dev/null | head -1)
if [ -n "$WHL" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$WHL"/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 3
fi
muh() { python3 -m muh.cli "$@"; }
SPEC=/tmp/h200-buckets.muh
# the spec as it is, its scan space narrowed to the question (threads 256 vs 384)
python3 - specs/h200.muh "$SPEC" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
alg = re.search(r"algorithm scan on h200 \{.*?\n\}\n", text, re.S).group(0)
new = re.sub(r"  space \{.*?\n  \}\n", "  space { threads = [256, 384] }\n", alg, flags=re.S)
assert new != alg
open(sys.argv[2], "w").write(text.replace(alg, new))
PY
cp "$SPEC" /tmp/before.muh
{
  date -u; nvidia-smi -L; nvcc --version | tail -1
  echo "== muh tune $SPEC scan --types float64 --buckets 2^24 --sizes 2^16,2^24,2^26,2^28 --apply"
  timeout -s INT 90 python3 -m muh.cli tune "$SPEC" scan --types float64 --buckets 2^24 --sizes 2^16,2^24,2^26,2^28 \
    --strategy exhaustive --runs 10 --confirm-runs 20 --confirm-rounds 3 --jobs 16 --db "$OUT/tune.sqlite" --apply
  echo "exit $?"
  echo "== the applied spec"
  diff /tmp/before.muh "$SPEC"
  muh fmt --check "$SPEC"; echo "fmt exit $?"
  muh explain "$SPEC" scan.float64.threads
  muh build "$SPEC" -o /tmp/gen; echo "build exit $?"
  grep -n -A3 "case MUH_FLOAT64:" /tmp/gen/kernels/scan.cu | head -12
  date -u
} 2>&1 | tee "$OUT/run.log"
cp "$SPEC" "$OUT/h200-buckets.after.muh"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$OUT/tune.sqlite" 2>/dev/null
rm -f "$OUT/tune.sqlite-wal" "$OUT/tune.sqlite-shm"
