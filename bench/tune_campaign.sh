#!/usr/bin/env bash
# The H200 tune campaign for specs/h200.muh (issue: "The lab spec, measured"). Resumable: every trial
# goes to one results database that travels between device calls (it comes back under $OUT and is
# carried into the next call), so a phase cut short by the call's limit continues where it stopped.
#
# Usage (device machine, repository root):
#   run(command="bash bench/tune_campaign.sh PHASE…", carry=[".whl", ".dev/tunedb"], timeout_s=…)
# then copy $OUT/tune.sqlite back to .dev/tunedb/ before the next call.
# Phases: topk transform reduce scan shapes confirm  (default: all, in that order)
#
# Budgets (what a CCCL maintainer would accept for a merge, scaled to the device limits):
#   topk      float32/float16/bfloat16, whole space (18 kernels each), the bench's shape 152064x50
#   transform float32/float64/float16/bfloat16, whole space (16 each)
#   reduce    float64/bfloat16/int32/int64 (float16/float32 were searched whole on 2026-11-30):
#             random order, budget 48 per type (of ~190)
#   scan      float32/int32/int64/float64: random order, budget 40 per type
#   shapes    topk float32 at k = 1 and k = 1024 (information only: one policy per type, no --apply)
#   confirm   every tuned family against the spec as it was before the campaign (--against;
#             CONFIRM="topk transform" limits it to the families that were tuned in this call)
set -u
OUT=${OUT:-/tmp/tune-out}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
fi
muh() { python3 -m muh.cli "$@"; }
DB=$OUT/tune.sqlite
[ -f .dev/tunedb/tune.sqlite ] && cp .dev/tunedb/tune.sqlite "$DB"
[ -f .dev/tunedb/h200.before.muh ] && cp .dev/tunedb/h200.before.muh "$OUT/h200.before.muh"
[ -f "$OUT/h200.before.muh" ] || cp specs/h200.muh "$OUT/h200.before.muh"
[ -f .dev/tunedb/h200.muh ] && cp .dev/tunedb/h200.muh specs/h200.muh  # the spec as the last call left it
PHASES=${*:-topk transform reduce scan shapes confirm}
COMMON="--db $DB --batch 12 --runs 10 --confirm-runs 20 --confirm-rounds 3"
VOCAB=152064
t() {  # one tune command with a wall-clock cap (SIGINT: the trials so far are kept; resume later)
  local cap=$1; shift
  echo "== muh tune $*  (cap ${cap}s)"; local t0=$SECONDS
  timeout -s INT "$cap" python3 -m muh.cli tune specs/h200.muh "$@" $COMMON; echo "exit $? after $((SECONDS - t0)) s"
}
{
  date -u; nvidia-smi -L; nvcc --version | tail -1
  for phase in $PHASES; do
    case $phase in
      topk) for ty in float32 float16 bfloat16; do
              t ${TOPK_CAP:-60} topk --types $ty --strategy exhaustive --topk-shape ${VOCAB}x50 --sizes $VOCAB,$((VOCAB * 8)),$((VOCAB * 64)) \
                --apply --plot "$OUT/tune-topk-$ty.png"; done ;;
      transform) t 75 transform --types float32,float64,float16,bfloat16 --strategy exhaustive --apply --plot "$OUT/tune-transform.png" ;;
      reduce) t 120 reduce --types float64,bfloat16,int32,int64 --budget 48 --strategy random --apply ;;
      scan) t 120 scan --types float32,int32,int64,float64 --budget 40 --strategy random --apply --plot "$OUT/tune-scan.png" ;;
      shapes) for k in 1 1024; do
                t 40 topk --types float32 --strategy exhaustive --topk-shape ${VOCAB}x$k --sizes $VOCAB,$((VOCAB * 64)); done ;;
      confirm) for fam in ${CONFIRM:-topk transform reduce scan}; do
                 case $fam in topk) extra="--topk-shape ${VOCAB}x50 --sizes $VOCAB,$((VOCAB * 64)) --types float32,float16,bfloat16";;
                              transform) extra="--types float32,float64,float16,bfloat16";;
                              reduce) extra="--types float64,bfloat16,int32,int64";;
                              scan) extra="--types float32,int32,int64,float64";; esac
                 t 45 $fam $extra --against "$OUT/h200.before.muh"; done ;;
      *) echo "unknown phase $phase" ;;
    esac
  done
  echo "== the spec after the campaign"
  diff "$OUT/h200.before.muh" specs/h200.muh
  muh fmt --check specs/h200.muh; echo "fmt exit $?"
  muh check specs/h200.muh --only measured; echo "check exit $?"
  date -u
} 2>&1 | tee -a "$OUT/campaign.log"
cp specs/h200.muh "$OUT/h200.muh"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$DB"
rm -f "$DB-wal" "$DB-shm"
