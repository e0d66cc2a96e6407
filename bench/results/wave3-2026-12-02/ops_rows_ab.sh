#!/usr/bin/env bash
# Experiment (2026-12-02, issue 16; run at the commit that added rows per block, reverted after it): rms_norm at hidden 2048 misses 90 % of copy with the large bucket's
# 128 x 2 rows. Same run: old code (one row per block) vs rows per block (new code), policies as given.
#   run(command="bash bench/results/wave3-2026-12-02/ops_rows_ab.sh", carry=[".whl", ".dev/opsab"], timeout_s=420)   # 257 s
set -u
SECONDS=0
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1 MAX_JOBS=16
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 3
ROOT=$PWD  # .dev/opsab/ops.cuh.old = git show <that commit>^:muh/codegen/ops/templates/ops.cuh
variant() {  # name, old|new, large items, large threads, small items, small threads
  local V=/tmp/v-$1; rm -rf $V; mkdir -p $V
  tar cf - --exclude=./.whl --exclude=./.dev --exclude=./generated . | tar xf - -C $V
  [ "$2" = old ] && cp $ROOT/.dev/opsab/ops.cuh.old $V/muh/codegen/ops/templates/ops.cuh
  python3 - "$V/specs/h200.muh" "$3" "$4" "$5" "$6" <<'PY'
import re, sys
p, li, lt, si, st = sys.argv[1:]
s = open(p).read()
a = s.index("algorithm rms_norm on h200 {"); b = s.index("\n}\n", a)
blk = s[a:b]
if li != "-":
    blk = re.sub(r"when elements >= 2\^22 \{.*?\n    \}", f"when elements >= 2^22 {{ items = {li}  threads = {lt} }}", blk, flags=re.S)
if si != "-":
    blk = re.sub(r"when elements < 2\^22 \{.*?\n    \}", f"when elements < 2^22 {{ items = {si}  threads = {st} }}", blk, flags=re.S)
open(p, "w").write(s[:a] + blk + s[b:])
PY
  echo "== $1: $2 code, large ${3}x${4}, small ${5}x${6} ($SECONDS s)"
  (cd $V && PYTHONPATH=/tmp/site:$V MUH_CACHE_DIR=/tmp/mc-$2 timeout -s KILL ${GRID_S:-80} python3 bench/ops_grid.py --match rms \
     --tokens 16,256,4096,16384 --out-md $OUT/grid-$1.md > $OUT/grid-$1.log 2>&1; echo "rc=$?")
  grep -E "^\| (bfloat16|float16)" $OUT/grid-$1.md | cut -d'|' -f2-11
}
variant A old - - - -
variant B old 1 256 - -
variant C new - - - -
variant D new 4 512 1 1024
variant E new 2 1024 1 512
echo "== ops tests, new code ($SECONDS s)"
PYTHONPATH=/tmp/site:$ROOT:$ROOT/tests/gpu MUH_CACHE_DIR=/tmp/mc-new timeout -s KILL ${TEST_S:-100} python3 -m pytest -q -x -p no:cacheprovider -rfE \
  tests/gpu/test_ops_gpu.py tests/gpu/test_ops_buckets_gpu.py > $OUT/ops-tests.log 2>&1; echo "rc=$?"; tail -4 $OUT/ops-tests.log
echo "total $SECONDS s"
