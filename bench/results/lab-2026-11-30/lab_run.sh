#!/usr/bin/env bash
# One call on the lab H200 (the lead's integration run): the GPU test suites of the kernels and the
# LLM ops, compute-sanitizer, and `muh tune` starting from CUB's *untuned* scan fallback.
#   run(command="bash bench/results/lab-2026-11-30/lab_run.sh", carry=[".whl"], timeout_s=600)
# Everything lands in $OUT/lab.tar.gz (logs, tune database, the tuned spec) plus $OUT/summary.txt.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=/tmp/lab; mkdir -p "$W"
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
S="$OUT/summary.txt"
# 1. kernels: GPU correctness (native + emulated warps), negative control, sanitizer, torch extension
TESTS_S=200 SAN_S=90 OUT="$W/kernels" timeout -s KILL 330 bash bench/device_run.sh tests > "$W/device_run.log" 2>&1
{ echo "== kernels (tests/gpu via bench/device_run.sh)"; tail -25 "$W/device_run.log"; } >> "$S"
export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu
# 2. LLM ops on the GPU (native + BI-V100 emulated at warp 64)
timeout -s KILL 90 python3 -m pytest --noconftest tests/gpu/test_ops_gpu.py -q -p no:cacheprovider > "$W/ops.log" 2>&1
{ echo "== ops"; tail -4 "$W/ops.log"; } >> "$S"
# 3. muh tune from CUB 3.0.1's untuned scan fallback (what sm_86 gets: 128 x 15, fixed<350,450>)
mkdir -p "$W/specs"
python3 - "$W/specs/h200.muh" <<'PY'
import re, sys
text = open("specs/h200.muh").read()
head, sep, rest = text.partition("algorithm scan on h200 {")
body, end, tail = rest.partition("\n}\n")
body = body.replace("items = 24", "items = 15").replace("fixed(ns = 688 ns, l2_write_latency = 1140 ns)", "fixed(ns = 350 ns, l2_write_latency = 450 ns)")
open(sys.argv[1], "w").write(head + sep + body + end + tail)
PY
cp "$W/specs/h200.muh" "$W/h200-untuned.muh"
{
  echo "== tune scan float32 from the untuned fallback"; date -u
  timeout -s INT 150 python3 -m muh.cli tune "$W/specs/h200.muh" scan --types float32 --budget 48 --strategy random \
    --db "$W/tune.sqlite" --batch 12 --runs 10 --confirm-runs 20 --confirm-rounds 3 --apply --plot "$W/tune-scan-untuned.png"; echo "exit $?"
  diff "$W/h200-untuned.muh" "$W/specs/h200.muh"
  python3 -m muh.cli fmt --check "$W/specs/h200.muh"; echo "fmt exit $?"
  python3 -m muh.cli build "$W/specs/h200.muh" -o "$W/gen"; echo "build exit $?"
  python3 -m muh.cli explain "$W/specs/h200.muh" scan.float32 | head -14
  python3 -m muh.cli check "$W/specs/h200.muh" --only measured; echo "check exit $?"
  echo "== tuned against untuned (fresh process, fresh poisoned inputs)"
  timeout -s INT 45 python3 -m muh.cli tune "$W/specs/h200.muh" scan --types float32 --against "$W/h200-untuned.muh" --db "$W/tune.sqlite"; echo "exit $?"
  date -u
} > "$W/tune.log" 2>&1
{ echo "== tune"; grep -E "score|winner|keep|exit|STALE|measured|speedup|^[-+<>]" "$W/tune.log" | head -60; } >> "$S"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$W/tune.sqlite" 2>/dev/null
tar --exclude=lab/gen --exclude="*.so" --exclude="*.o" -czf "$OUT/lab.tar.gz" -C /tmp lab 2>/dev/null
cat "$S"
