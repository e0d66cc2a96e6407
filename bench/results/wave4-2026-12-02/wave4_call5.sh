#!/usr/bin/env bash
# 2026-12-02, fifth device call: why the grid's torch.ops.muh.rms_norm (82-86 % of copy at hidden 2048)
# and the C entry in rms_rows.cu (94-99 %) differ: both paths timed in one process, then the launches
# under ncu (grid and block of every rms_norm kernel each path makes).
#   run(command="bash bench/results/wave4-2026-12-02/wave4_call5.sh", carry=[".whl"], timeout_s=470)
set -u
SECONDS=0
END=${DEADLINE_S:-450}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source bench/device_env.sh
timeout -s KILL $(cap 330) python3 bench/results/wave4-2026-12-02/experiments/rms_path_probe.py > $OUT/probe.log 2>&1; echo "probe rc=$? at $SECONDS s" >> $OUT/times.txt
timeout -s KILL $(cap 100) ncu --kernel-name regex:rms_norm --launch-count 4 --section LaunchStats \
  python3 bench/results/wave4-2026-12-02/experiments/rms_path_probe.py --once > $OUT/ncu.log 2>&1; echo "ncu rc=$? at $SECONDS s" >> $OUT/times.txt
