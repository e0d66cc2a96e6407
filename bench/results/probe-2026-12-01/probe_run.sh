#!/usr/bin/env bash
# One device call (issue 13): the H200 probe bundle built and run natively; the BI-V100 (baseline) bundle
# in warp-64 emulation; the baseline's native warp-64 layer on the H200's 32-lane warps (negative
# control: the lane-exchange test must see 32 of 64 lanes); torch's properties and a 1 GiB copy.
# Bundles are generated beforehand (muh probe … -o .bundles/…); results go to $OUT.
#   bash bench/results/probe-2026-12-01/probe_run.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.bundles
OUT="${OUT:-/tmp/probe-out}"
mkdir -p "$OUT"
L="$OUT/logs.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$L" 2>&1
# negative control built in the background while the native bundle runs
( nvcc -O3 -std=c++14 -arch=sm_90 -I $B/bi100/probe/include $B/bi100/probe/probe.cu -o /tmp/bi100-native -ldl ) > /tmp/bi100-native-build.log 2>&1 &
BG=$!
echo "== h200 bundle (native)" >> "$L"
{ time bash $B/h200/probe/run.sh "$OUT/probe-h200.json"; } >> "$L" 2>&1; echo "h200 run.sh rc=$?" >> "$L"
echo "== bi100 bundle, warp-64 emulation" >> "$L"
{ time MUH_PROBE_ARCH=sm_90 bash $B/emu64/probe/run.sh "$OUT/probe-bi100-emu64.json"; } >> "$L" 2>&1; echo "emu64 run.sh rc=$?" >> "$L"
wait $BG; echo "== bi100 native warp-64 layer on the H200 (negative control); build rc=$?" >> "$L"
cat /tmp/bi100-native-build.log >> "$L"
{ time /tmp/bi100-native "$OUT/probe-bi100-native-on-h200.json" --compiler "nvcc -std=c++14 (negative control)"; } >> "$L" 2>&1
echo "bi100 native run rc=$?" >> "$L"
echo "== torch" >> "$L"
python3 bench/results/probe-2026-12-01/probe_torch.py "$OUT/torch.json" >> "$L" 2>&1; echo "torch rc=$?" >> "$L"
tail -60 "$L"
echo "total ${SECONDS} s"
