#!/usr/bin/env bash
# One device call (issue 16 must-haves 3-4, issue 20's LLM ops): `muh tune` of the ops' own policies on the
# H200 (rms_norm and silu_and_mul x bfloat16 and float16, size buckets split at rows x hidden = 2^22, i.e.
# 8 MiB of 16-bit elements: tokens 1..256 below, 4096.. above for hidden 2048..8192), four tunes side by
# side (their compiles share the CPUs; `muh tune` lets one process at a time time on the GPU), then the
# winners applied one after the other into a copy of specs/h200.muh (every trial comes from the DBs:
# nothing is measured again), then the ops of both specs timed in one run (bench/results/ops-tune-2026-12-01/ops_tune_ab.py) and the
# bucket tests. Results: $OUT/ops-tune.tar.gz (logs, DBs, tuned spec, A/B table) and a few files beside.
#   run(command="cd .dev/opstune && bash bench/results/ops-tune-2026-12-01/ops_tune_run.sh", carry=[".dev/opstune", ".whl"])
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/ops-tune; rm -rf "$W"; mkdir -p "$W"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ../../.whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD || exit 3
export MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1
printf '#!/bin/sh\nexec python3 -c "import sys; from muh.cli import main; sys.argv = [\\"muh\\"] + sys.argv[1:]; main()" "$@"\n' > /tmp/muh
chmod +x /tmp/muh
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1; nproc; } > "$W/env.txt" 2>&1
cp specs/h200.muh "$W/h200.muh"
SIZES=2^13,2^16,2^20,2^23,2^26
ARGS="--buckets 2^22 --sizes $SIZES --strategy exhaustive --batch 6 --confirm-top 2"
t0=$SECONDS
for fam in rms_norm silu_and_mul; do
  for t in bfloat16 float16; do
    ( timeout -s INT ${TUNE_S:-150} /tmp/muh tune "$W/h200.muh" $fam --types $t $ARGS --jobs 4 \
        --db "$W/$fam-$t.sqlite" > "$W/$fam-$t.log" 2>&1; echo "$fam $t rc=$? $((SECONDS-t0)) s" >> "$W/times.txt" ) &
  done
done
wait
echo "tune $((SECONDS-t0)) s" | tee -a "$W/times.txt"
for fam in rms_norm silu_and_mul; do
  for t in bfloat16 float16; do
    timeout -s INT ${APPLY_S:-30} /tmp/muh tune "$W/h200.muh" $fam --types $t $ARGS --jobs 16 \
      --db "$W/$fam-$t.sqlite" --apply > "$W/$fam-$t.apply.log" 2>&1
    echo "apply $fam $t rc=$? $((SECONDS-t0)) s" | tee -a "$W/times.txt"
    tail -4 "$W/$fam-$t.apply.log"
  done
done
/tmp/muh explain "$W/h200.muh" ops > "$W/explain-ops.txt" 2>&1
/tmp/muh check "$W/h200.muh" --only measured > "$W/check-measured.txt" 2>&1
save() { cp "$W/h200.muh" "$OUT/h200.tuned.muh"; cp "$W/times.txt" "$OUT/"; [[ -f $W/ab.md ]] && cp "$W/ab.md" "$OUT/"
         tar -C "$W" --exclude tune-units -czf "$OUT/ops-tune.tar.gz" .; }
save  # what a time limit cuts off later still leaves the tune's results
timeout -s KILL ${AB_S:-80} python3 bench/results/ops-tune-2026-12-01/ops_tune_ab.py --before specs/h200.muh --after "$W/h200.muh" \
  --out-md "$W/ab.md" --out-json "$W/ab.json" > "$W/ab.log" 2>&1
echo "ab rc=$? $((SECONDS-t0)) s" | tee -a "$W/times.txt"
timeout -s KILL ${TEST_S:-40} python3 -m pytest tests/gpu/test_ops_buckets_gpu.py -q -rfE -p no:cacheprovider \
  > "$W/gpu_tests.log" 2>&1
echo "gpu tests rc=$? $((SECONDS-t0)) s" | tee -a "$W/times.txt"; tail -3 "$W/gpu_tests.log"
save
cat "$W/ab.md" 2>/dev/null | head -80 || tail -30 "$W/ab.log"
