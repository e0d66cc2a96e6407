#!/usr/bin/env bash
# One device call for the histogram family: its GPU tests (H200 native, BI-V100 policy with warp 64
# emulated, H200 with 4 sub-histograms) and its bench lines against CUB 3.0.1
# DeviceHistogram::HistogramEven, same run, with the uint8 policy variants. Every library is built
# beforehand on a CPU machine (no compile on the device):
#   rsync -a --delete --exclude .git --exclude .venv --exclude .muh-cache ./ /work/main/.dev/histo/
#   (cd /work/main/.dev/histo && MUH_CACHE_DIR=$PWD/.prebuilt python3 bench/results/histogram-2026-12-01/histogram_prebuild.py)
#   run(command="cd .dev/histo && bash bench/results/histogram-2026-12-01/histogram_run.sh", carry=[".dev/histo", ".whl"])
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
WHL=${WHL:-../../.whl}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site $WHL/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export MUH_CACHE_DIR=${MUH_CACHE_DIR:-$PWD/.prebuilt} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt"
t0=$SECONDS
# the bench's kernels: the H200 spec's histogram only (other families compile empty); cached if prebuilt
python3 - > "$OUT/build.log" 2>&1 <<'PY'
from dataclasses import replace
from muh.codegen.kernels import emitter
from bench import presets
c = presets.h200(); emitter.write(replace(c, policies={"histogram": c.histogram}), "/tmp/genh")
PY
timeout -s KILL 150 python3 -m pytest tests/gpu/test_histogram_gpu.py -rfE -p no:cacheprovider -v \
  -o console_output_style=classic > "$OUT/pytest.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; grep -cE " PASSED" "$OUT/pytest.log"
grep -E "FAILED|ERROR" "$OUT/pytest.log" | head -20; tail -3 "$OUT/pytest.log"
timeout -s KILL 150 python3 bench/kernels.py --only histogram --variants --gen /tmp/genh \
  --out-json "$OUT/histogram.json" --out-md "$OUT/histogram.md" > "$OUT/bench.log" 2>&1
echo "bench rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; cat "$OUT/histogram.md"; tail -3 "$OUT/bench.log"
