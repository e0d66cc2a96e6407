#!/usr/bin/env bash
# The H200 tune campaign for specs/h200.muh (issue 20: "The lab spec, measured"). Resumable: every trial
# goes to one results database that travels between device calls (it comes back under $OUT and is
# carried into the next call), so a phase cut short by the call's limit continues where it stopped.
#
# Usage (device machine, repository root or a copy of it under .dev/<name>):
#   run(command="cd .dev/campaign && WHL=../../.whl DEADLINE_S=400 bash bench/tune_campaign.sh PHASE…",
#       carry=[".whl", ".dev/campaign"], timeout_s=…)
# then copy $OUT/tune.sqlite (and $OUT/h200.muh) back to .dev/tunedb/ before the next call.
# Phases: topk transform reduce scan shapes reduce-rest shapes-16 segmented_reduce radix_sort confirm
#         (default: topk transform reduce scan shapes confirm, in that order)
#
# Budgets (what a CCCL maintainer would accept for a merge, scaled to the device limits):
#   topk        float32/float16/bfloat16 (TOPK_TYPES), whole space (48 kernels each), the bench's shape 152064x50
#   transform   float32/float64/float16/bfloat16, whole space (16 each)
#   reduce      float64/bfloat16/int32/int64 (REDUCE_TYPES): the whole space (192 each; 78/156/117/78 distinct
#               kernels) in seeded random order, so a cut-short run is still a uniform sample
#   segmented_reduce  float32/bfloat16/float64 (SEGRED_TYPES): the tile pass's threads x items, whole space,
#               measured on segments of 4096 (the harness's shape) at the default sizes: 2^16 and 2^20 are
#               16 and 256 segments, the one-launch path (a block per segment: the block class), 2^24 and
#               2^28 the three-launch path, for every candidate (kFewSegments = threads >= 256); the
#               sub-policies small, warp and one_block (the block class's bound) are the spec's, kept
#   radix_sort  uint32/float32/uint64 (RADIX_TYPES), whole space (sub-policy dims: onesweep.threads x
#               onesweep.items x histogram.threads, 24 each), keys only, the harness's fill (low-entropy keys)
#   reduce-rest float32/float16 again, whole space (searched whole on 2026-11-30 with the older harness,
#               before the twin A/A and the spin kernel; this records them as measured-and-kept or not)
#   scan        float32/int32/float64/int64 (SCAN_TYPES): random order, budget $SCAN_BUDGET (default 96) of 432 each
#   shapes      topk float32 at k = 1 and k = 1024 on vocabulary rows, whole space (information only:
#               one policy per type, no --apply); shapes-16 the same for bfloat16
#   confirm     every tuned family against the spec as it was before the campaign (--against;
#               CONFIRM="topk transform" limits it). The per-type phases already run --against right
#               after every type whose policy changed, in a fresh process.
# Each type is its own `muh tune` process: --apply writes its winner (or its measured-and-kept
# record) before the next type starts, so a call cut short keeps every finished type.
# DEADLINE_S (seconds from the start of this script): each command's cap is shortened to end 25 s
# before it (fmt, measured check and the database checkpoint), and a command with < 15 s left is skipped.
set -u
END=$((SECONDS + ${DEADLINE_S:-100000}))
OUT=${OUT:-/tmp/tune-out}
mkdir -p "$OUT" "$OUT/plots"
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
WHL=${WHL:-.whl}
if [ -d "$WHL" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$WHL"/*.whl && export PYTHONPATH=/tmp/site:$PWD
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
SCAN_BUDGET=${SCAN_BUDGET:-96}
save() {  # what a call cut short still returns: the spec as applied so far, the plots
  cp specs/h200.muh "$OUT/h200.muh"
  tar czf "$OUT/plots.tar.gz" -C "$OUT" plots 2>/dev/null
}
LAST=""
t() {  # one tune command with a wall-clock cap (SIGINT: the trials so far are kept; resume later)
  local cap=$1; shift
  local left=$((END - SECONDS - 25))
  [ "$left" -lt "$cap" ] && cap=$left
  if [ "$cap" -lt 15 ]; then echo "== SKIPPED (deadline): muh tune $*"; LAST=""; return; fi
  echo "== muh tune $*  (cap ${cap}s)"; local t0=$SECONDS
  timeout -k 10 -s INT "$cap" python3 -m muh.cli tune specs/h200.muh "$@" $COMMON 2>&1 | tee /tmp/last.log
  echo "exit ${PIPESTATUS[0]} after $((SECONDS - t0)) s"
  LAST=$(grep -h "applied winners to" /tmp/last.log)
  save
}
changed() {  # did the last --apply change the policy of type $1 (not only record it as kept)?
  echo "$LAST" | tr ';' '\n' | grep -E "(^|: | )$1(\.plus)?: " | grep -qv ": kept "
}
tune_type() {  # FAMILY TYPE CAP ARGS…: search, apply, and prove a changed policy against the old spec
  local fam=$1 ty=$2 cap=$3; shift 3
  t "$cap" "$fam" --types "$ty" "$@" --apply --plot "$OUT/plots/tune-$fam-$ty.png"
  if changed "$ty"; then
    local extra=""
    [ "$fam" = topk ] && extra="--topk-shape ${VOCAB}x50 --sizes $VOCAB,$((VOCAB * 64))"
    t 40 "$fam" --types "$ty" $extra --against "$OUT/h200.before.muh"
  fi
}
{
  date -u; nvidia-smi -L; nvcc --version | tail -1
  for phase in $PHASES; do
    case $phase in
      topk) for ty in ${TOPK_TYPES:-float32 float16 bfloat16}; do
              tune_type topk $ty ${TOPK_CAP:-60} --strategy exhaustive --topk-shape ${VOCAB}x50 \
                --sizes $VOCAB,$((VOCAB * 8)),$((VOCAB * 64)); done ;;
      transform) for ty in float32 float64 float16 bfloat16; do tune_type transform $ty 40 --strategy exhaustive; done ;;
      reduce) for ty in ${REDUCE_TYPES:-float64 bfloat16 int32 int64}; do tune_type reduce $ty 70 --strategy random; done ;;
      reduce-rest) for ty in float32 float16; do tune_type reduce $ty 70 --strategy random; done ;;
      segmented_reduce) for ty in ${SEGRED_TYPES:-float32 bfloat16 float64}; do  # the tile pass (threads x items)
                          tune_type segmented_reduce $ty 40 --strategy exhaustive; done ;;
      radix_sort) for ty in ${RADIX_TYPES:-uint32 float32 uint64}; do  # onesweep threads x items, histogram threads
                    tune_type radix_sort $ty ${RADIX_CAP:-90} --strategy exhaustive; done ;;
      scan) for ty in ${SCAN_TYPES:-float32 int32 float64 int64}; do
              tune_type scan $ty 75 --strategy random --budget "$SCAN_BUDGET"; done ;;
      shapes|shapes-16) ty=float32; [ $phase = shapes-16 ] && ty=bfloat16
              for k in 1 1024; do
                t 45 topk --types $ty --strategy exhaustive --topk-shape ${VOCAB}x$k --sizes $VOCAB,$((VOCAB * 64)); done ;;
      confirm) for fam in ${CONFIRM:-topk transform reduce scan}; do
                 case $fam in topk) extra="--topk-shape ${VOCAB}x50 --sizes $VOCAB,$((VOCAB * 64)) --types float32,float16,bfloat16";;
                              transform) extra="--types float32,float64,float16,bfloat16";;
                              reduce) extra="--types float32,float64,float16,bfloat16,int32,int64";;
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
save
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$DB"
rm -f "$DB-wal" "$DB-shm"
