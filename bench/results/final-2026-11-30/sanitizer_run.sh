#!/usr/bin/env bash
# compute-sanitizer over every generated kernel (incl. the split top-k path), one device call:
#   run(command="bash bench/results/final-2026-11-30/sanitizer_run.sh", carry=[".whl"], timeout_s=200)
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/san"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1 MAX_JOBS=16 MUH_SANITIZER_LOG_DIR=$OUT/san
timeout -s KILL 170 python3 -m pytest tests/gpu/test_sanitizer.py -n 6 -v -p no:cacheprovider -rfEx \
  -o console_output_style=classic > "$OUT/sanitizer.log" 2>&1
echo "rc $?"; grep -E "PASSED|FAILED|XFAIL|ERROR|passed|failed" "$OUT/sanitizer.log" | tail -12
for f in "$OUT"/san/*.log; do echo "$(basename $f): $(grep -h 'SUMMARY' $f)"; done
cd "$OUT/san" && tar czf ../san.tgz . && cd - > /dev/null && rm -rf "$OUT/san"
