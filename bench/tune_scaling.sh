#!/usr/bin/env bash
# Multi-GPU scaling of `muh tune` (issue: one Ray worker per GPU). The same sweep on 1 GPU and on all
# N GPUs of the machine, each into a fresh results database; prints wall time, variants/s, the
# speed-up (target >= 0.8 x N) and both runs' winners. Needs a machine with 2+ GPUs.
#   run(command="bash bench/tune_scaling.sh", carry=[".whl"], kind="nvidia-h200-x4", timeout_s=600)
set -u
OUT=${OUT:-/tmp/scaling-out}; mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
fi
N=$(nvidia-smi -L | wc -l)
SWEEP="specs/h200.muh reduce --types float32,float16 --budget 96 --strategy random --seed 1 --batch 6 --runs 10"
{
  nvidia-smi -L
  for g in 1 "$N"; do
    for mode in local ray; do
      flag=""; [ $mode = ray ] && flag="--ray"
      t0=$(date +%s.%N)
      python3 -m muh.cli tune $SWEEP --gpus "$g" $flag --db "$OUT/scaling-$mode-$g.sqlite" > "$OUT/scaling-$mode-$g.log" 2>&1
      rc=$?; t1=$(date +%s.%N)
      n=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select count(*) from trials where phase='search'\").fetchone()[0])" "$OUT/scaling-$mode-$g.sqlite")
      python3 -c "import sys; w=float(sys.argv[2])-float(sys.argv[1]); n=int(sys.argv[3]); print(f'gpus={sys.argv[4]} mode={sys.argv[5]} rc={sys.argv[6]} wall={w:.1f}s variants={n} throughput={n/w:.2f}/s')" "$t0" "$t1" "$n" "$g" "$mode" "$rc"
      grep -E "winner|keeping|kept" "$OUT/scaling-$mode-$g.log" | head -4
    done
  done
} 2>&1 | tee "$OUT/scaling.txt"
