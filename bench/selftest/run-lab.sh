#!/usr/bin/env bash
# The start self-test's kernels on the lab GPU (issue 37.3), one device call, from the repository root:
#   bench/selftest/run-lab.sh GEN OUT
# GEN: `python3 -m muh.cli build bench/selftest/lab.muh --out GEN` (made on a CPU machine: the device needs
# only torch and nvcc). The image's steps: muh_kernels copied into a site folder, built with nvcc (sm_90),
# checked; then `python3 -m muh_kernels.selftest` exactly as the start step runs it, with its cases file.
set -uo pipefail
GEN=$(realpath "$1"); OUT=$2
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
site=$(mktemp -d)
cp -r "$GEN/muh_kernels" "$site/"
cd "$site" || exit 3
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'; } > "$OUT/device.txt" 2>&1
timeout 300 python3 -m muh_kernels --build "$GEN" > "$OUT/build.log" 2>&1; echo "build exit $?" >> "$OUT/build.log"
timeout 60 python3 -m muh_kernels --check >> "$OUT/build.log" 2>&1
# the start step, as the run file writes it (its own process, bounded), the result where the plugin reads it
timeout 40 python3 -m muh_kernels.selftest --out "$OUT/selftest.json" > "$OUT/selftest.log" 2>&1; echo "selftest exit $?" >> "$OUT/selftest.log"
# the same kernels, twice more in this call: how stable the verdicts are
for i in 2 3; do
  timeout 40 python3 -m muh_kernels.selftest --out "$OUT/selftest-$i.json" > "$OUT/selftest-$i.log" 2>&1
done
cat "$OUT/device.txt" "$OUT/selftest.log"
